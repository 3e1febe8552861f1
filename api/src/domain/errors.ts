// What the domain throws: the errors of adapters/errors.ts (one class, so that
// http/problems.ts maps every layer's by kind), and the cases only services
// meet. They say what went wrong and never how HTTP answers it.
import { ServiceError, type FieldError, unavailable } from "../adapters/errors.ts";

export {
  type ContractError,
  ContractRevertError,
  type ErrorFacts,
  type ErrorKind,
  type FieldError,
  isRevert,
  ServiceError as DomainError,
} from "../adapters/errors.ts";

export const domainErrors = {
  invalid: (errors: FieldError[]) =>
    new ServiceError("invalid", "validation_failed", "Validation failed", "The request has invalid fields.", {
      errors,
    }),
  notFound: (what: string) => new ServiceError("not_found", "resource_not_found", "Not found", `${what} not found.`),
  unavailable,
};

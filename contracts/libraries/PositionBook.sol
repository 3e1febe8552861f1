// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {Math} from "@openzeppelin/contracts/utils/math/Math.sol";
import {SafeCast} from "@openzeppelin/contracts/utils/math/SafeCast.sol";
import {IStableMinter} from "../interfaces/IStableMinter.sol";
import {RatioBuckets} from "./RatioBuckets.sol";

/// @title The positions' accounting of the minter: debt, collateral and the redemption map.
/// @notice Redemptions lower every position's debt by the same fraction and
/// take its collateral in proportion to that debt at the oracle price (or, when
/// the system is worth less than its debt, the same fraction of collateral), so
/// a redemption neither picks a victim nor touches notes nobody minted against.
/// Per position this is lazy: the book keeps one affine map
/// `collateral' = a·collateral − b·debt, debt' = f·debt` composed over every
/// redemption, and a position applies the part composed since it last changed.
/// A position stores the id of a snapshot of the map, not the map: the first
/// write after a redemption saves one, every other write reuses it, so a
/// position is two storage slots.
///
/// A par redemption takes the same zatoshi per unit of debt from every
/// position, so a position under 100% would give more than it holds: before
/// it runs, positions under 100% are redistributed (their debt and collateral
/// spread over the others in proportion to debt, as Liquity v1 does when its
/// stability pool is empty). The positions are filed by collateral per debt
/// (`RatioBuckets`) so the redemption finds those without walking them all.
///
/// Linked (its functions are external and run on the minter's storage by
/// delegatecall) to keep the minter under the contract size limit; its events
/// are the minter's (IStableMinter) and are emitted from the minter's address.
library PositionBook {
    using RatioBuckets for RatioBuckets.Bitmap;

    /// @dev zatoshi × (USD × 1e8 per ZEC) × 100 = USD with 18 decimals.
    uint256 private constant ZAT_PRICE_TO_USD18 = 100;
    uint256 private constant BPS = 10_000;
    /// @dev Fixed-point unit of the redemption map.
    uint256 private constant ONE = 1e36;
    uint32 private constant NO_SNAPSHOT = type(uint32).max;
    /// @dev Positions under 100% one redemption redistributes before it gives up.
    uint256 private constant MAX_SETTLED = 24;
    /// @dev A redemption also settles positions within this many zatoshi of
    /// 100%, so that no read's rounding leaves one it would overcharge.
    uint256 private constant SETTLE_MARGIN_ZAT = 4;
    /// @dev A frame's map starts afresh (a new epoch that keeps the debt) as
    /// soon as a factor leaves [1e27, 1e45]: positions read through the frames
    /// since their last write, and keys filed in one frame stay precise (a key
    /// only tells ratios apart while b does not dwarf f·ratio).
    uint256 private constant FRAME_FLOOR = 1e27;
    uint256 private constant FRAME_CEILING = 1e45;

    /// @dev The composed map of one epoch's redemptions and redistributions:
    /// `collateral' = a·collateral − b·debt`, `debt' = f·debt`. b is zatoshi
    /// per debt wei (ONE-scaled), negative when redistributions gave more
    /// collateral per unit of debt than redemptions took. An epoch whose final
    /// map has f = 0 ended with all debt redeemed.
    struct Accumulator {
        uint256 a;
        int256 b;
        uint256 f;
    }

    struct Counters {
        uint32 snapshots;
        uint32 debtors;
        /// @dev The first epoch after the last one that ended with no debt:
        /// positions filed in it or later may hold debt.
        uint32 liveFrom;
    }

    /// @dev Debt and backing collateral as of map snapshot `snapshot` of its
    /// epoch (0: the identity map an epoch starts with). A position with no
    /// debt holds free collateral that redemptions never touch. A position
    /// with debt in the current epoch is filed under `key` (RatioBuckets), in
    /// its bucket's sorted list (prev, next).
    struct Position {
        address owner;
        IStableMinter.PositionStatus status;
        uint32 epoch;
        uint32 snapshot;
        uint64 collateralZat;
        uint128 debt;
        uint32 prev;
        uint32 next;
        uint256 key;
    }

    /// @dev Every position and the totals over them. What every redemption
    /// and position change reads and writes shares one slot (totalDebt to
    /// mapSnapshot).
    struct Book {
        mapping(uint256 positionId => Position) positions;
        uint128 totalDebt;
        uint64 backingCollateralZat;
        /// @dev Starts a new map when all debt is gone or the map's factors leave
        /// their range; positions read through every epoch since their last write.
        uint32 epoch;
        /// @dev The snapshot equal to `map`, or NO_SNAPSHOT after a redemption changed it.
        uint32 mapSnapshot;
        /// @dev The last snapshot id handed out (ids never repeat across epochs),
        /// and the positions with debt in this epoch (the filed ones).
        Counters counters;
        /// @dev Collateral of positions without debt (repaid or liquidated): the owner's to take.
        uint256 freeCollateralZat;
        Accumulator map;
        mapping(uint32 snapshot => Accumulator) snapshots;
        mapping(uint32 epoch => Accumulator) finalMap;
        RatioBuckets.Bitmap buckets;
    }

    /// @notice Sets the map to the identity; the minter's constructor calls it once.
    function init(Book storage book) internal {
        book.map = _identity();
    }

    /// @notice Position `id`'s collateral and debt now.
    function read(Book storage book, uint256 id) external view returns (uint256 collateral, uint256 debt) {
        return _read(book, book.positions[id]);
    }

    /// @notice Moves position `id` to (collateral, debt), keeping the totals.
    function write(Book storage book, uint256 id, uint256 collateral, uint256 debt) external {
        _write(book, id, book.positions[id], collateral, debt);
    }

    /// @notice Closes position `id` (holding `collateral` and `debt`) as
    /// liquidated and spreads it, less `reward`, over the others.
    function redistribute(Book storage book, uint256 id, uint256 collateral, uint256 debt, uint256 reward) external {
        _redistribute(book, id, book.positions[id], collateral, debt, reward);
    }

    /// @notice What a redemption of `amount` pays at `price` and a fee of `feeBps`.
    function quote(
        Book storage book,
        uint256 amount,
        uint256 feeBps,
        uint256 price
    ) external view returns (uint256 zatDue, uint256 feeZat) {
        (zatDue, feeZat, ) = _quote(book, amount, feeBps, price);
    }

    /// @dev Whether a par redemption settles the position (spreads it over the others) before it
    /// charges anyone: under 100%, or within 4 zatoshi and 1 ppm of it, so that no read's rounding
    /// leaves one it would overcharge. `redistribute` takes exactly these, so that whatever holds up
    /// a redemption's walk, anyone may clear.
    function settles(uint256 collateral, uint256 debt, uint256 price) internal pure returns (bool) {
        if (debt == 0) return false;
        if (collateral < SETTLE_MARGIN_ZAT) return true;
        // 1 ppm over 100%: no rounding of a later, smaller position can tip it under.
        return (collateral - SETTLE_MARGIN_ZAT) * price * ZAT_PRICE_TO_USD18 < debt + debt / 1_000_000;
    }

    /// @notice Whether a position's debt can be spread over the others.
    function spreadable(Book storage book, uint256 debt) internal view returns (bool) {
        return _spreadable(book, debt);
    }

    /// @notice Lowers every position's debt by `amount` and takes its share of
    /// the collateral (see the minter's title): par less `feeBps` while the
    /// positions are worth their debt, pro rata when they are not.
    function redeem(
        Book storage book,
        uint256 amount,
        uint256 feeBps,
        uint256 latest
    ) external returns (uint256 zatDue, uint256 feeZat) {
        uint256 debtBefore = book.totalDebt;
        if (amount > debtBefore) revert IStableMinter.RedemptionExceedsDebt(amount, debtBefore);
        uint256 debtAfter = debtBefore - amount;
        // Every position with debt owes at least a wei.
        if (debtAfter != 0 && debtAfter < book.counters.debtors)
            revert IStableMinter.RedemptionExceedsDebt(amount, debtBefore);
        bool solvent;
        (zatDue, feeZat, solvent) = _quote(book, amount, feeBps, latest);
        if (zatDue == 0) return (0, feeZat);
        if (solvent) {
            // A fee-free redistribution keeps the totals, so the quote stands.
            uint32 stuck = _settleUnderwater(book, latest);
            if (stuck != 0) {
                // Under 100% and holding all but dust of the debt: it is the system,
                // and pays pro rata out of its own collateral, as an insolvent one would.
                (zatDue, feeZat) = (_redeemFromOne(book, stuck, amount), 0);
                emit IStableMinter.RedeemedFromPositions(amount, zatDue, book.totalDebt, book.backingCollateralZat);
                return (zatDue, feeZat);
            }
        }

        uint256 backing = book.backingCollateralZat;
        Accumulator memory map = book.map;
        if (solvent) {
            // Each position gives zatDue / totalDebt zatoshi per unit of its debt, rounded up.
            map.b += SafeCast.toInt256(Math.mulDiv(map.f, zatDue, debtBefore, Math.Rounding.Ceil));
        } else {
            // Each position gives the same fraction of its collateral: its ratio is unchanged.
            uint256 kept = backing - zatDue;
            map.a = Math.mulDiv(map.a, kept, backing);
            map.b = _scaleUp(map.b, kept, backing);
        }
        // Debt rounds up: what an owner owes never rounds in the owner's favour.
        map.f = Math.mulDiv(map.f, debtAfter, debtBefore, Math.Rounding.Ceil);
        book.totalDebt = SafeCast.toUint128(debtAfter);
        book.backingCollateralZat = SafeCast.toUint64(backing - zatDue);
        if (debtAfter == 0) _endEpoch(book, map);
        else _setMap(book, map);
        emit IStableMinter.RedeemedFromPositions(amount, zatDue, debtAfter, book.backingCollateralZat);
    }

    /// @dev The position's collateral and debt now: its snapshot carried
    /// through the rest of its book.epoch's map and every book.epoch's since (none for
    /// free collateral). Collateral rounds down and debt up, in the system's favour.
    function _read(
        Book storage book,
        Position storage position
    ) private view returns (uint256 collateral, uint256 debt) {
        collateral = position.collateralZat;
        debt = position.debt;
        if (debt == 0) return (collateral, 0);
        uint32 e = position.epoch;
        Accumulator memory at = _snapshot(book, position.snapshot);
        while (true) {
            bool current = e == book.epoch;
            Accumulator memory end = current ? book.map : book.finalMap[e];
            (collateral, debt) = _apply(collateral, debt, at, end);
            if (current) {
                // Every other position with debt owes at least a wei of the total.
                uint256 others = book.counters.debtors - 1;
                uint256 cap = book.totalDebt > others ? book.totalDebt - others : 1;
                return (collateral, Math.min(Math.max(debt, 1), cap));
            }
            if (end.f == 0) return (collateral, 0);
            ++e;
            at = _identity();
        }
    }

    /// @dev (collateral, debt) carried from map `at` to map `end` of the same book.epoch:
    /// a_r = a/a_s, f_r = f/f_s, debt·b_r = debt·(b − a_r·b_s)/f_s.
    function _apply(
        uint256 collateral,
        uint256 debt,
        Accumulator memory at,
        Accumulator memory end
    ) private pure returns (uint256, uint256) {
        uint256 aR = Math.mulDiv(end.a, ONE, at.a);
        // Rounded up: the charge never rounds in the owner's favour.
        int256 taken = end.b - _mulDivSigned(aR, at.b, ONE, false);
        int256 left = SafeCast.toInt256(Math.mulDiv(collateral, aR, ONE)) - _mulDivSigned(debt, taken, at.f, true);
        // Only a positive `left` is cast.
        // forge-lint: disable-next-line(unsafe-typecast)
        return (left > 0 ? uint256(left) : 0, Math.mulDiv(debt, end.f, at.f, Math.Rounding.Ceil));
    }

    /// @dev Moves the position to (collateral, debt) at today's map, keeping
    /// the system totals equal to the sum over positions and the position
    /// filed by its ratio while it has debt.
    function _write(
        Book storage book,
        uint256 id,
        Position storage position,
        uint256 collateral,
        uint256 debt
    ) private {
        (uint256 oldCollateral, uint256 oldDebt) = _read(book, position);
        // Which total holds it now: debt stored in a live book.epoch means backing.
        bool filed = position.debt != 0 && position.epoch >= book.counters.liveFrom;
        if (filed) {
            book.totalDebt -= SafeCast.toUint128(oldDebt);
            book.backingCollateralZat -= SafeCast.toUint64(Math.min(oldCollateral, book.backingCollateralZat));
        } else {
            book.freeCollateralZat -= oldCollateral;
        }
        uint32 snapshot = 0;
        if (debt != 0) {
            book.totalDebt += SafeCast.toUint128(debt);
            book.backingCollateralZat += SafeCast.toUint64(collateral);
            snapshot = book.mapSnapshot;
            if (snapshot == NO_SNAPSHOT) {
                snapshot = ++book.counters.snapshots;
                book.snapshots[snapshot] = book.map;
                book.mapSnapshot = snapshot;
            }
            uint256 key = _key(book, collateral, debt);
            if (!filed || key != position.key || position.epoch != book.epoch) {
                if (filed) _unfile(book, position);
                else ++book.counters.debtors;
                _file(book, SafeCast.toUint32(id), position, key);
            }
        } else {
            book.freeCollateralZat += collateral;
            if (filed) {
                _unfile(book, position);
                --book.counters.debtors;
            }
        }
        position.collateralZat = SafeCast.toUint64(collateral);
        position.debt = SafeCast.toUint128(debt);
        position.epoch = book.epoch;
        position.snapshot = snapshot;
    }

    /// @dev The position's collateral per debt in its book.epoch's first frame:
    /// (collateral·f/debt + b)/a (ONE-scaled zatoshi per wei).
    function _key(Book storage book, uint256 collateral, uint256 debt) private view returns (uint256) {
        Accumulator memory map = book.map;
        int256 origin = SafeCast.toInt256(Math.mulDiv(collateral, map.f, debt)) + map.b;
        return RatioBuckets.encode(_mulDivSigned(ONE, origin, map.a, false));
    }

    /// @dev Files the position in its bucket's list of the current book.epoch, in key order.
    function _file(Book storage book, uint32 id, Position storage position, uint256 key) private {
        uint256 bucket = RatioBuckets.bucketOf(key);
        uint256 headKey = (uint256(book.epoch) << 24) | bucket;
        uint32 prev;
        uint32 next = book.buckets.heads[headKey];
        while (next != 0 && book.positions[next].key < key) {
            prev = next;
            next = book.positions[next].next;
        }
        if (prev == 0) {
            if (next == 0) book.buckets.set(book.epoch, bucket);
            book.buckets.heads[headKey] = id;
        } else {
            book.positions[prev].next = id;
        }
        if (next != 0) book.positions[next].prev = id;
        position.prev = prev;
        position.next = next;
        position.key = key;
    }

    function _unfile(Book storage book, Position storage position) private {
        (uint32 prev, uint32 next) = (position.prev, position.next);
        if (next != 0) book.positions[next].prev = prev;
        if (prev != 0) {
            book.positions[prev].next = next;
        } else {
            uint32 e = position.epoch;
            uint256 bucket = RatioBuckets.bucketOf(position.key);
            book.buckets.heads[(uint256(e) << 24) | bucket] = next;
            if (next == 0) book.buckets.unset(e, bucket);
        }
    }

    /// @dev Redistributes the positions a par charge would take more than
    /// they hold from, riskiest first: the riskiest of each live book.epoch heads
    /// its order, and the walk ends at the first one it cannot hurt, as every
    /// later one is at least as well covered. Returns a position under 100%
    /// that cannot be spread over the others (they hold under a millionth of
    /// its debt), or 0.
    function _settleUnderwater(Book storage book, uint256 price) private returns (uint32 stuck) {
        for (uint256 settled = 0; ; ++settled) {
            (uint32 id, uint256 collateral, uint256 debt) = _riskiest(book);
            if (id == 0 || !settles(collateral, debt, price)) return 0;
            if (!_spreadable(book, debt)) return id;
            if (settled == MAX_SETTLED) revert IStableMinter.UnderwaterPositionsPending(MAX_SETTLED);
            _redistribute(book, id, book.positions[id], collateral, debt, 0);
        }
    }

    /// @dev The position with the least collateral per debt: the head of each
    /// live book.epoch's order, compared by their reads.
    function _riskiest(Book storage book) private view returns (uint32 id, uint256 collateral, uint256 debt) {
        for (uint32 e = book.counters.liveFrom; e <= book.epoch; ++e) {
            uint256 bucket = book.buckets.nextSet(e, 0);
            if (bucket == RatioBuckets.NONE) continue;
            uint32 head = book.buckets.heads[(uint256(e) << 24) | bucket];
            (uint256 c, uint256 d) = _read(book, book.positions[head]);
            if (id == 0 || c * debt < collateral * d) (id, collateral, debt) = (head, c, d);
        }
    }

    /// @dev Whether a position's debt can be spread over the others: they must
    /// hold at least a millionth of it, or the rounding of their dust would be
    /// multiplied a millionfold.
    function _spreadable(Book storage book, uint256 debt) private view returns (bool) {
        return (book.totalDebt - debt) * 1_000_000 >= debt;
    }

    /// @dev A redemption of `amount` out of position `id` alone, pro rata.
    function _redeemFromOne(Book storage book, uint32 id, uint256 amount) private returns (uint256 zatDue) {
        Position storage position = book.positions[id];
        (uint256 collateral, uint256 debt) = _read(book, position);
        if (amount > debt) revert IStableMinter.RedemptionExceedsDebt(amount, debt);
        zatDue = Math.mulDiv(collateral, amount, debt);
        _write(book, id, position, collateral - zatDue, debt - amount);
        if (book.totalDebt == 0) _endEpoch(book, book.map);
    }

    /// @dev Closes the position as liquidated and spreads its debt and its
    /// collateral less `reward` over every other position in proportion to
    /// debt: one more step of the map, which keeps the order of ratios.
    function _redistribute(
        Book storage book,
        uint256 id,
        Position storage position,
        uint256 collateral,
        uint256 debt,
        uint256 reward
    ) private {
        uint256 total = book.totalDebt;
        _write(book, id, position, 0, 0);
        position.status = IStableMinter.PositionStatus.Liquidated;
        uint256 rest = book.totalDebt;
        uint256 spread = collateral - reward;
        Accumulator memory map = book.map;
        // The collateral handed out rounds down and the debt up.
        map.b -= SafeCast.toInt256(Math.mulDiv(map.f, spread, rest));
        map.f = Math.mulDiv(map.f, total, rest, Math.Rounding.Ceil);
        book.totalDebt = SafeCast.toUint128(total);
        book.backingCollateralZat += SafeCast.toUint64(spread);
        _setMap(book, map);
        emit IStableMinter.PositionRedistributed(id, msg.sender, debt, collateral, reward);
    }

    /// @dev Par while the positions are worth their debt, less a fee that
    /// rounds up (never to zero); pro rata without a fee when they are not, so
    /// that every ZSD gets the same share however the redemptions are split.
    function _quote(
        Book storage book,
        uint256 amount,
        uint256 feeBps,
        uint256 price
    ) private view returns (uint256 zatDue, uint256 feeZat, bool solvent) {
        uint256 debt = book.totalDebt;
        uint256 backing = book.backingCollateralZat;
        solvent = backing * price * ZAT_PRICE_TO_USD18 >= debt;
        if (!solvent) return (Math.mulDiv(amount, backing, debt), 0, false);
        uint256 grossZat = amount / (price * ZAT_PRICE_TO_USD18);
        feeZat = Math.mulDiv(grossZat, feeBps, BPS, Math.Rounding.Ceil);
        zatDue = grossZat - feeZat;
    }

    // The two helpers below cast a signed value to its magnitude only after testing its sign, and
    // `-value` reverts at int256's minimum, so no cast truncates.
    // forge-lint: disable-start(unsafe-typecast)
    /// @dev value · num / den, rounded towards +∞ (b may only round up).
    function _scaleUp(int256 value, uint256 num, uint256 den) private pure returns (int256) {
        if (value >= 0) return SafeCast.toInt256(Math.mulDiv(uint256(value), num, den, Math.Rounding.Ceil));
        return -SafeCast.toInt256(Math.mulDiv(uint256(-value), num, den));
    }

    /// @dev x · value / den, rounded towards +∞ when `up`, else towards −∞.
    function _mulDivSigned(uint256 x, int256 value, uint256 den, bool up) private pure returns (int256) {
        if (value >= 0) {
            return
                SafeCast.toInt256(Math.mulDiv(x, uint256(value), den, up ? Math.Rounding.Ceil : Math.Rounding.Floor));
        }
        return -SafeCast.toInt256(Math.mulDiv(x, uint256(-value), den, up ? Math.Rounding.Floor : Math.Rounding.Ceil));
    }
    // forge-lint: disable-end(unsafe-typecast)

    /// @dev The new map after a step; a new frame (an book.epoch that keeps the
    /// debt) once a factor leaves its range, so none wears away.
    function _setMap(Book storage book, Accumulator memory map) private {
        book.mapSnapshot = NO_SNAPSHOT;
        if (map.a >= FRAME_FLOOR && map.f >= FRAME_FLOOR && map.f <= FRAME_CEILING) {
            book.map = map;
            return;
        }
        book.finalMap[book.epoch] = map;
        ++book.epoch;
        book.map = _identity();
        book.mapSnapshot = 0;
    }

    function _identity() private pure returns (Accumulator memory) {
        return Accumulator(ONE, 0, ONE);
    }

    function _snapshot(Book storage book, uint32 id) private view returns (Accumulator memory) {
        return id == 0 ? _identity() : book.snapshots[id];
    }

    /// @dev All debt was redeemed: what collateral backed it is now free, and
    /// no position filed before holds debt any more.
    function _endEpoch(Book storage book, Accumulator memory map) private {
        map.f = 0;
        book.finalMap[book.epoch] = map;
        ++book.epoch;
        book.map = _identity();
        book.mapSnapshot = 0;
        book.counters.debtors = 0;
        book.counters.liveFrom = book.epoch;
        book.freeCollateralZat += book.backingCollateralZat;
        book.backingCollateralZat = 0;
    }
}

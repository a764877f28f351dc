//! What a store writes, decided before its entry is: a confirmation of what already
//! holds, a plan that would leave the believed versions as they are, or the change to
//! write (the fold's op, its plan and its entry). Store, import and `import-notes`'
//! "already holds" ask the same rules.

use super::write::period_error;
use super::*;
use crate::core::tier;
use crate::format::credential_in;

/// What a store of `req` does to the `believed` versions of its key, at the valid time
/// `clock` and the transaction time `tx`.
pub(super) enum Decided {
    /// Nothing: the believed version at this index already says it.
    Holds(usize),
    /// Starts a version from `from` by the plan `change`.
    Write {
        op: Op,
        from: ValidTime,
        change: Change,
    },
}

/// Decides a store: a confirmation of what holds, a plan that would leave the believed
/// versions as they are (a retry with the same explicit period), or a change to write.
pub(super) fn decide(
    req: &StoreRequest,
    believed: &[Version],
    (clock, tx): (ValidTime, TxTime),
    many: bool,
) -> Result<Decided> {
    let periods: Vec<Period> = believed.iter().map(Version::period).collect();
    if let Some(i) = confirmed(req, believed, &periods, clock, many) {
        return Ok(Decided::Holds(i));
    }
    let mut from = req.valid_from.unwrap_or(clock);
    let end = req.valid_to.unwrap_or(ValidEnd::Open);
    if many && req.valid_from.is_none() && req.valid_to.is_none() {
        // The same value holding now for good, vouched for anew (a person confirms
        // what a model inferred): it keeps its start, and takes the old one's place.
        if let Some(old) = believed.iter().find(|v| {
            v.value == req.value
                && same_tags(&v.tags, &req.tags)
                && v.period().contains(clock)
                && v.valid_to.is_infinite()
        }) {
            from = old.valid_from;
        }
    }
    let op = store_op(req, from, end, many);
    // The plan decides what this store closes and which version it starts; the index
    // executes this plan as it records the entry, and never plans it again.
    let change = plan_unwritten(&op, tx, believed)?;
    if let Some(i) = change.restates(believed) {
        return Ok(Decided::Holds(i));
    }
    Ok(Decided::Write { op, from, change })
}

/// The confirmation rule (docs/temporal.md) for a request: no period given, and the value (with
/// the same tags) already holds at `tx` in a version that keeps the same end.
pub(super) fn confirmed(
    req: &StoreRequest,
    believed: &[Version],
    periods: &[Period],
    clock: ValidTime,
    many: bool,
) -> Option<usize> {
    if req.valid_from.is_some() || req.valid_to.is_some() {
        return None;
    }
    let same = |i: usize| {
        believed[i].value == req.value
            && same_tags(&believed[i].tags, &req.tags)
            && tier::no_higher(req.tier, believed[i].tier)
    };
    if many {
        // A value of a key of many values holds for good once added: the same value
        // holding now, for good, is the same fact.
        return (0..believed.len())
            .find(|&i| periods[i].contains(clock) && periods[i].to.is_infinite() && same(i));
    }
    temporal::confirmation(periods, clock, same)
}

/// The entry a store request writes.
pub(super) fn store_draft(
    req: &StoreRequest,
    from: ValidTime,
    tx: TxTime,
    many: bool,
) -> EntryDraft<'_> {
    EntryDraft {
        key: &req.key,
        op: if many { EntryOp::Add } else { EntryOp::Store },
        valid_from: Some(from),
        valid_to: req.valid_to,
        recorded: tx,
        agent: &req.agent,
        tier: req.tier,
        tags: &req.tags,
        entry: None,
        secret_allowed: req.allow_secret
            && credential_in(&req.key, Some(&req.value), &req.tags, &req.agent).is_some(),
        accepts: &[],
        value: Some(&req.value),
    }
}

/// The fold operation of a store request.
pub(super) fn store_op(req: &StoreRequest, from: ValidTime, end: ValidEnd, many: bool) -> Op {
    Op::Store(StoreOp {
        key: req.key.clone(),
        value: req.value.clone(),
        tags: req.tags.clone(),
        agent: req.agent.clone(),
        valid_from: from,
        valid_to: end,
        tier: req.tier,
        many,
    })
}

/// What `op` at `tx` changes among `believed`, planned before its entry is written (its
/// source and content are not known yet, and no plan depends on them).
pub(super) fn plan_unwritten(op: &Op, tx: TxTime, believed: &[Version]) -> Result<Change> {
    let unwritten = Event {
        tx,
        op: op.clone(),
        source: Source::default(),
        content: ChainHash::GENESIS,
    };
    change::plan(&unwritten, tx, believed).map_err(|e| period_error(e.from, e.to))
}

fn same_tags(a: &[String], b: &[String]) -> bool {
    let mut a: Vec<&String> = a.iter().collect();
    let mut b: Vec<&String> = b.iter().collect();
    a.sort();
    b.sort();
    a == b
}

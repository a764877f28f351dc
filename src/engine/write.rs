//! The write sequences under the writers' lock: checking a store request once
//! ([`Checked`]), store, forget, rekey and seal, and the one append every write (and
//! import) ends in: render, append durably, record in the index.

use super::decide::{Decided, decide, plan_unwritten, store_draft};
use super::*;
use crate::core::tier::{self, Writer};
use crate::format::credential_in;

/// Refuses a model's write to a key that holds a standing rule a person set: the rule
/// would stop being believed, and leave every context block (a model's rule is only
/// ever a fact to confirm, and it goes under another key).
pub(super) fn refuse_over_rule(by: Writer, key: &str, believed: &[Version]) -> Result<()> {
    if by == Writer::Person
        || !believed
            .iter()
            .any(|v| tier::persons_rule(&v.key, &v.tags, v.tier))
    {
        return Ok(());
    }
    Err(Error::input(
        format!(
            "`{key}` holds a standing rule the person set; a model does not change or remove it"
        ),
        "store the proposed change under another key (e.g. `note:` plus the rule's name) for the person to review; they change the rule with `mem7 store` or `mem7 forget` at the command line",
    ))
}

/// A store request that passed [`validate_store`]. [`check`] is the only way to make
/// one, so [`Engine::store_checked`] takes it without checking it again: a request is
/// validated once per write, however many layers it passes.
#[derive(Clone, Debug)]
pub struct Checked(StoreRequest);

impl std::ops::Deref for Checked {
    type Target = StoreRequest;
    fn deref(&self) -> &StoreRequest {
        &self.0
    }
}

/// Validates a store request against the settings of the workspace it is written to
/// (see [`validate_store`]) and decides the tier it records there: the one tier rule
/// ([`tier::recorded`]), for every door.
pub fn check(
    mut req: StoreRequest,
    config: &crate::config::Config,
    now: TxTime,
) -> Result<Checked> {
    validate_store(&req, config)?;
    // Without valid_from a fact holds from now, so its end must come after now.
    if let (None, Some(ValidEnd::At(to))) = (req.valid_from, req.valid_to)
        && to <= now.as_valid()
    {
        return Err(Error::input(
            format!("valid_to ({to}) must be after valid_from (now, {now})"),
            "give valid_from too, or a valid_to in the future, or `infinity`",
        ));
    }
    req.tier = tier::recorded(
        req.by,
        req.tier,
        tier::rule_shaped(&req.key, &req.tags),
        config.agent_ceiling()?,
    );
    Ok(Checked(req))
}

/// Checks a store request against the workspace's settings, before anything (even the
/// index) is opened: bad input never changes anything on disk.
pub fn validate_store(req: &StoreRequest, config: &crate::config::Config) -> Result<()> {
    // The key and the agent are never a credential, even when the value may be one:
    // checked first, and whole (an agent name is never cut before this).
    if let Some(e) = credential_in(&req.key, None, &[], &req.agent) {
        return Err(e);
    }
    validate::key(&req.key)?;
    for t in &req.tags {
        validate::tag(t)?;
    }
    validate::agent(&req.agent)?;
    validate::entry_size(&req.value, &req.tags, config.max_value_bytes())?;
    if let (Some(from), Some(ValidEnd::At(to))) = (req.valid_from, req.valid_to)
        && to <= from
    {
        return Err(period_error(from, to));
    }
    if !req.allow_secret
        && let Some(e) = credential_in(&req.key, Some(&req.value), &req.tags, &req.agent)
    {
        return Err(e);
    }
    Ok(())
}

impl Engine {
    /// Stores a fact at transaction time `now` (raised to stay monotonic), checking the
    /// request first ([`check`]).
    pub fn store(&mut self, req: &StoreRequest, now: TxTime) -> Result<StoreOutcome> {
        let checked = check(req.clone(), self.ws.config(), now)?;
        self.store_checked(&checked, now)
    }

    /// Stores a request the front end already checked.
    pub fn store_checked(&mut self, req: &Checked, now: TxTime) -> Result<StoreOutcome> {
        self.clock = Some(now);
        let _lock = self.ws.lock()?;
        self.refresh()?;
        let rows = self.index.believed_rows(&req.key)?;
        self.store_locked(req, now, rows)
    }

    /// A store decided on what `key` holds: under the writers' lock, `make` is given the
    /// versions of `key` believed now and returns the request to store (for `key`), or
    /// `None` to write nothing. So a writer that adds to a value (capture's list of the
    /// files a session touched) never loses what another process added meanwhile.
    /// The request is checked ([`check`]) before anything is written.
    pub fn store_from(
        &mut self,
        key: &str,
        now: TxTime,
        make: impl FnOnce(&[Version]) -> Option<StoreRequest>,
    ) -> Result<Option<StoreOutcome>> {
        validate::key(key)?;
        self.clock = Some(now);
        let _lock = self.ws.lock()?;
        self.refresh()?;
        let rows = self.index.believed_rows(key)?;
        let Some(req) = make(&rows.versions) else {
            return Ok(None);
        };
        if req.key != key {
            return Err(Error::internal(
                format!("a store decided on `{key}` asked to write `{}`", req.key),
                "report this as a bug",
            ));
        }
        let checked = check(req, self.ws.config(), now)?;
        self.store_locked(&checked, now, rows).map(Some)
    }

    /// [`Engine::store_checked`] with the lock held and `rows`, the key's believed
    /// versions, read under it.
    fn store_locked(
        &mut self,
        req: &Checked,
        now: TxTime,
        rows: crate::index::Believed,
    ) -> Result<StoreOutcome> {
        let req: &StoreRequest = req;
        let tx = self.next_tx(now)?;
        let believed = &rows.versions;
        refuse_over_rule(req.by, &req.key, believed)?;
        // Valid time is world time: without `valid_from` a fact holds from this
        // machine's clock, even when the transaction time had to move past an entry
        // recorded ahead of it (docs/temporal.md, "Clocks that disagree").
        let many = self.ws.config().is_many(&req.key);
        let (op, from, change) = match decide(req, believed, (now.as_valid(), tx), many)? {
            Decided::Holds(i) => {
                return Ok(StoreOutcome::Unchanged {
                    version: believed[i].clone(),
                });
            }
            Decided::Write { op, from, change } => (op, from, change),
        };
        let closed = change.close.len();
        let planned = Planned {
            change,
            believed: rows,
        };
        let (source, mut change) =
            self.append(&store_draft(req, from, tx, many), tx, (op, planned))?;
        let mut version = change.start.pop().expect("a store starts a version");
        version.source = source;
        Ok(StoreOutcome::Stored { version, closed })
    }

    /// Whether storing `req` at `now` would write nothing, because the fact already
    /// holds as believed: the rule a store applies before writing (value, tags, a tier
    /// no higher than the one believed, the period), with the tier the request would be
    /// recorded with. `import-notes` reports such a fact as unchanged.
    pub fn holds(&self, req: &StoreRequest, now: TxTime) -> Result<bool> {
        let req = check(req.clone(), self.ws.config(), now)?;
        let believed = self.believed(&req.key)?;
        let many = self.ws.config().is_many(&req.key);
        let decided = decide(&req, &believed, (now.as_valid(), now), many)?;
        Ok(matches!(decided, Decided::Holds(_)))
    }

    /// Stops believing every version of `key` at `now`, or, with `entry`, the versions
    /// carrying that entry's value (one value of a key of many values). `entry` is the
    /// entry's hash or a prefix of it that names one believed value.
    pub fn forget(
        &mut self,
        key: &str,
        entry: Option<&str>,
        (agent, by): (&str, Writer),
        now: TxTime,
    ) -> Result<ForgetOutcome> {
        if let Some(e) = credential_in(key, None, &[], agent) {
            return Err(e);
        }
        validate::lookup_key(key)?;
        validate::agent(agent)?;
        self.clock = Some(now);
        let _lock = self.ws.lock()?;
        self.refresh()?;
        let rows = self.index.believed_rows(key)?;
        refuse_over_rule(by, key, &rows.versions)?;
        let entry = match entry {
            None => None,
            Some(wanted) => Some(believed_entry(key, &rows.versions, wanted)?),
        };
        if rows.versions.is_empty() {
            return Ok(ForgetOutcome::NothingBelieved);
        }
        let tx = self.next_tx(now)?;
        let draft = EntryDraft {
            key,
            op: EntryOp::Forget,
            valid_from: None,
            valid_to: None,
            recorded: tx,
            agent,
            tier: None,
            tags: &[],
            entry: entry.as_deref(),
            secret_allowed: false,
            accepts: &[],
            value: None,
        };
        let op = Op::Forget {
            key: key.to_string(),
            entry: entry.clone(),
        };
        let change = plan_unwritten(&op, tx, &rows.versions)?;
        let closed = change.close.len();
        let planned = Planned {
            change,
            believed: rows,
        };
        let (source, _) = self.append(&draft, tx, (op, planned))?;
        Ok(ForgetOutcome::Forgotten { closed, source })
    }

    /// Plans moving every believed version of `from` to `to` (`mem7 rekey`): the
    /// versions that move, and what `to` believes now over their valid periods (which
    /// the move supersedes). Writes nothing.
    pub fn plan_rekey(&self, from: &str, to: &str) -> Result<RekeyPlan> {
        validate::lookup_key(from)?;
        validate::key(to)?;
        if from == to {
            return Err(Error::input(
                format!("`{from}` is both the key to move and the key to move it to"),
                "give two different keys: the one the fact is under now, and the one it belongs under",
            ));
        }
        let moved = self.index.believed(from)?;
        if moved.is_empty() {
            let near = self.near_keys_by_name(from)?;
            return Err(Error::input(
                format!("nothing is believed about `{from}`, so there is nothing to move"),
                match near.first() {
                    Some(n) => format!(
                        "did you mean `{}`? (a list of the keys under a prefix shows them)",
                        n.key
                    ),
                    None => {
                        "a list of the keys under a prefix shows the keys there are".to_string()
                    }
                },
            ));
        }
        let displaced = self
            .index
            .believed(to)?
            .into_iter()
            .filter(|t| moved.iter().any(|m| m.period().overlaps(t.period())))
            .collect();
        Ok(RekeyPlan { moved, displaced })
    }

    /// Moves every believed version of `from` to `to` by the ordinary write rules: each
    /// is stored under `to` with its own valid period (superseding what `to` held over
    /// it; `to` keeps its values outside), then `from` is forgotten. All appended
    /// entries: both keys stay readable `as_of` before.
    pub fn rekey(
        &mut self,
        from: &str,
        to: &str,
        (agent, by): (&str, Writer),
        now: TxTime,
    ) -> Result<RekeyPlan> {
        // The new key and the agent are checked whole before anything is written.
        if let Some(e) = credential_in(to, None, &[], agent) {
            return Err(e);
        }
        validate::agent(agent)?;
        let plan = self.plan_rekey(from, to)?;
        // A model moves no person's rule, away from its key or over another's.
        refuse_over_rule(by, from, &plan.moved)?;
        refuse_over_rule(by, to, &plan.displaced)?;
        for v in &plan.moved {
            let req = StoreRequest {
                key: to.to_string(),
                value: v.value.clone(),
                valid_from: Some(v.valid_from),
                valid_to: Some(if v.valid_to.is_infinite() {
                    ValidEnd::Infinity
                } else {
                    ValidEnd::At(v.valid_to)
                }),
                tags: v.tags.clone(),
                agent: agent.to_string(),
                // The value is already in the memory files (written with `secret:
                // allowed` by whoever asked for it then); moving it adds no secret. The
                // key and the agent were checked above, and are again.
                allow_secret: credential_in("", Some(&v.value), &v.tags, "").is_some(),
                // Who vouched for it does not change with its key when a person moves
                // it; a model's move records it within the ceiling, as any model write.
                tier: v.tier,
                by,
            };
            self.store(&req, now)?;
        }
        self.forget(from, None, (agent, by), now)?;
        Ok(plan)
    }

    /// Accepts, under the writer's name, every entry `verify` reports as changed,
    /// inserted, reordered, unlinked or merged, and every run of foreign text: appends a
    /// `seal` entry that records the accepted entries' hashes and the runs' digests so
    /// that `verify` is clean afterwards. Nothing is rewritten; the edit stays visible
    /// in the files and in git.
    pub fn seal(&mut self, agent: &str, now: TxTime) -> Result<SealOutcome> {
        validate::agent(agent)?;
        self.clock = Some(now);
        let _lock = self.ws.lock()?;
        self.refresh()?;
        self.set_aside_torn()?;
        let report = crate::verify::verify_locked(&self.ws, &self.key, None)?;
        if let Some(f) = report.findings.iter().find(|f| f.kind.unreadable()) {
            return Err(Error::input(
                format!("{}:{}: {}", f.file, f.line, f.message),
                "fix this by hand first (seal accepts entries as they are; it cannot accept what it cannot read)",
            ));
        }
        let mut seen = std::collections::HashSet::new();
        let accepted: Vec<&crate::verify::Finding> = crate::verify::acceptable(&report)
            .into_iter()
            .filter(|f| f.computed.is_some_and(|h| seen.insert(h)))
            .collect();
        if accepted.is_empty() {
            return Ok(SealOutcome::NothingToSeal {
                entries: report.entries,
            });
        }
        let hashes: Vec<ChainHash> = accepted.iter().filter_map(|f| f.computed).collect();
        let mut body = format!(
            "Sealed by {agent}: accepted {} as they are now.\n",
            crate::verify::count_accepted(accepted.iter().copied())
        );
        for f in &accepted {
            // Foreign text has no key.
            let key = if f.key.is_empty() {
                String::new()
            } else {
                format!(" `{}`", f.key)
            };
            body.push_str(&format!(
                "\n- {}:{}{key} ({}): {}",
                f.file,
                f.line,
                f.kind,
                f.computed.map(|h| h.to_hex()).unwrap_or_default()
            ));
        }
        let tx = self.next_tx(now)?;
        let draft = EntryDraft {
            key: "mem7:seal",
            op: EntryOp::Seal,
            valid_from: None,
            valid_to: None,
            recorded: tx,
            agent,
            tier: None,
            tags: &[],
            entry: None,
            secret_allowed: false,
            accepts: &hashes,
            value: Some(&body),
        };
        let nothing = Planned {
            change: Default::default(),
            believed: Default::default(),
        };
        let (source, _) = self.append(&draft, tx, (Op::Seal, nothing))?;
        Ok(SealOutcome::Sealed {
            accepted: accepted.iter().map(|f| (*f).clone()).collect(),
            source,
        })
    }

    /// Renders, appends (durably) and indexes one entry; returns where it went.
    /// `planned` is the change the write planned under the lock; the index executes it
    /// as it records the entry, and it is returned with the started versions' sources
    /// filled in.
    fn append(
        &mut self,
        draft: &EntryDraft<'_>,
        tx: TxTime,
        (op, mut planned): (Op, Planned),
    ) -> Result<(Source, Change)> {
        // The one check every byte bound for a memory file passes (docs/integrity.md).
        draft.refuse_credentials()?;
        // Only now, with the write decided, move any torn tail out of the way.
        self.set_aside_torn()?;
        let file = Workspace::day_file(&tx.utc_day());
        let prev = self.index.head_before(&file)?;
        let (text, hash) = render_entry(draft, prev, &self.key);
        let (known_size, newlines_before) = self.index.file_state(&file)?.unwrap_or((0, 0));
        let appended = self.ws.append(&file, &text)?;
        if appended.offset != known_size {
            // Someone outside the lock (an editor, git) changed the file since the index
            // looked at it: read it again instead of assuming only our entry was added.
            self.refresh()?;
            let line = self.index.line_of(&file, &hash.to_hex())?.unwrap_or(0);
            let source = Source {
                file,
                line,
                hash: hash.to_hex(),
            };
            planned.change.landed(&op, &source);
            return Ok((source, planned.change));
        }
        let source = Source {
            file: file.clone(),
            line: (newlines_before + appended.separator_newlines + 1) as u32,
            hash: hash.to_hex(),
        };
        let added = appended.separator_newlines + text.bytes().filter(|&b| b == b'\n').count() + 1;
        // The index's file digests use the plain hash whatever the chain key, so that a
        // process without the key agrees with this one about what the file holds.
        let digest_hash = match self.key {
            ChainKey::Plain => hash,
            ChainKey::Keyed(_) => crate::format::parse_file(&text, &ChainKey::Plain)
                .entries
                .first()
                .map_or(hash, |e| e.computed),
        };
        planned.change.landed(&op, &source);
        let change = planned.change.clone();
        let event = Event {
            tx,
            op,
            source: source.clone(),
            content: digest_hash,
        };
        self.index.record_append(
            (&event, planned),
            &appended.stat,
            hash,
            digest_hash,
            appended.offset + appended.separator_newlines as u64,
            added,
        )?;
        Ok((source, change))
    }
}

/// The full hash of the believed value of `key` whose entry hash is `wanted` or starts
/// with it; an error naming the problem when none or several are.
pub(super) fn believed_entry(key: &str, believed: &[Version], wanted: &str) -> Result<String> {
    let wanted = wanted.trim();
    let mut found: Vec<&str> = believed
        .iter()
        .map(|v| v.source.hash.as_str())
        .filter(|h| !h.is_empty() && !wanted.is_empty() && h.starts_with(wanted))
        .collect();
    found.sort();
    found.dedup();
    match found.as_slice() {
        [one] => Ok(one.to_string()),
        [] => Err(Error::input(
            format!("no value of `{key}` believed now was written by an entry `{wanted}`"),
            "give the hash of the entry of one of its values (the JSON of a recall or a history gives each value's `hash`)",
        )),
        _ => Err(Error::input(
            format!(
                "`{wanted}` starts the hash of {} entries of `{key}`",
                found.len()
            ),
            "give more of the hash, so that it names one value",
        )),
    }
}

pub(super) fn period_error(from: ValidTime, to: ValidTime) -> Error {
    Error::input(
        format!("valid_to ({to}) must be after valid_from ({from})"),
        "give a valid_to later than valid_from, or `infinity`, or leave valid_to out to fill until the next known change",
    )
}

//! The driver's command monitoring (`CommandStartedEvent::connection.address`, mongodb crate
//! 3.x): which member each read of the documents went to, recorded as the client runs.

use bson::{Bson, Document};
use mongodb::event::command::CommandEvent;
use mongodb::event::EventHandler;
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

/// The members that served reads of documents: (database, collection, host:port).
#[derive(Debug, Clone, Default)]
pub(crate) struct ReadsSeen(Arc<Mutex<BTreeSet<(String, String, String)>>>);

impl ReadsSeen {
    /// A command monitor that records where each document read went: `find`, and
    /// `aggregate` that starts with `$sample` (before 4.4, and the proposals' pre-scan).
    pub(super) fn handler(&self) -> EventHandler<CommandEvent> {
        let seen = self.0.clone();
        EventHandler::callback(move |ev: CommandEvent| {
            let CommandEvent::Started(s) = ev else { return };
            let reads_documents = match s.command_name.as_str() {
                "find" => true,
                "aggregate" => first_stage_is_sample(&s.command),
                _ => false,
            };
            if let (true, Ok(coll)) = (reads_documents, s.command.get_str(&s.command_name)) {
                if let Ok(mut set) = seen.lock() {
                    set.insert((s.db.clone(), coll.to_string(), s.connection.address.to_string()));
                }
            }
        })
    }

    pub(super) fn hosts_for(&self, db: &str, coll: &str) -> Vec<String> {
        let set = self.0.lock().map(|s| s.clone()).unwrap_or_default();
        set.into_iter().filter(|(d, c, _)| d == db && c == coll).map(|(_, _, h)| h).collect()
    }
}

fn first_stage_is_sample(cmd: &Document) -> bool {
    cmd.get_array("pipeline").ok().and_then(|p| p.first()).and_then(Bson::as_document).is_some_and(|d| d.contains_key("$sample"))
}

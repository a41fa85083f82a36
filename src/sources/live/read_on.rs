//! Where each read of the documents ran. The driver picks a member by the read preference
//! (`secondaryPreferred` unless the URI sets one) and says nothing when it falls back: with
//! the secondaries down, the sample silently ran on the primary. Its command monitoring
//! (`CommandStartedEvent::connection.address`, mongodb crate 3.x) names the member each
//! command went to; that member's own `isMaster` says what it is.

use super::session::LiveSession;
use crate::model::member::{MemberRole, ReadOn};
use bson::{doc, Document};
use mongodb::options::{ReadPreference, SelectionCriteria};

/// The read preference's mode, as the URI spells it.
pub(crate) fn mode(read: &SelectionCriteria) -> &'static str {
    match read {
        SelectionCriteria::ReadPreference(ReadPreference::Primary) => "primary",
        SelectionCriteria::ReadPreference(ReadPreference::PrimaryPreferred { .. }) => "primaryPreferred",
        SelectionCriteria::ReadPreference(ReadPreference::Secondary { .. }) => "secondary",
        SelectionCriteria::ReadPreference(ReadPreference::SecondaryPreferred { .. }) => "secondaryPreferred",
        SelectionCriteria::ReadPreference(ReadPreference::Nearest { .. }) => "nearest",
        _ => "custom",
    }
}

/// The words when the member is not the kind the mode prefers (None when it is, or when
/// the deployment has one kind only: a standalone, a mongos).
pub(crate) fn fell_back(host: &str, role: &MemberRole, mode: &str) -> Option<String> {
    match (mode, role) {
        ("secondaryPreferred", MemberRole::Primary) => Some(format!(
            "the documents were read on the primary {host}: no secondary was available, so the read preference secondaryPreferred fell back to it (the sample's load fell on the primary)"
        )),
        ("primaryPreferred", MemberRole::Secondary) => Some(format!(
            "the documents were read on the secondary {host}: no primary was available, so the read preference primaryPreferred fell back to it (recent writes may be missing)"
        )),
        _ => None,
    }
}

impl LiveSession {
    /// The members the document reads of this collection ran on, each with what it is.
    pub(crate) async fn read_on(&self) -> Vec<ReadOn> {
        let mode = mode(&self.requested);
        let mut out = Vec::new();
        for host in self.reads_seen.hosts_for(self.namespace.db(), &self.coll_name) {
            let role = match self.reach(std::slice::from_ref(&host), None) {
                Ok(s) => match s.command(&s.client.database("admin"), doc! {"isMaster": 1}, "isMaster on").await {
                    Ok(h) => role_of(&h),
                    Err(_) => MemberRole::Unknown,
                },
                Err(_) => MemberRole::Unknown,
            };
            out.push(ReadOn { fell_back: fell_back(&host, &role, mode), host, role, read_preference: mode.to_string() });
        }
        out
    }
}

/// What a member is, from its own `isMaster`.
pub(super) fn role_of(hello: &Document) -> MemberRole {
    let in_set = hello.get_str("setName").is_ok();
    if hello.get_bool("ismaster").unwrap_or(false) && in_set {
        MemberRole::Primary
    } else if hello.get_bool("secondary").unwrap_or(false) {
        MemberRole::Secondary
    } else if !in_set && hello.get_str("msg").is_err() {
        MemberRole::Standalone
    } else {
        MemberRole::Unknown
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_move_from_the_preferred_member_is_said() {
        let w = fell_back("db1:27017", &MemberRole::Primary, "secondaryPreferred").unwrap();
        assert!(w.starts_with("the documents were read on the primary db1:27017: no secondary was available"), "{w}");
        assert_eq!(fell_back("db2:27017", &MemberRole::Secondary, "secondaryPreferred"), None);
        assert_eq!(fell_back("db1:27017", &MemberRole::Standalone, "secondaryPreferred"), None);
        assert!(fell_back("db2:27017", &MemberRole::Secondary, "primaryPreferred").is_some());
        assert_eq!(fell_back("db1:27017", &MemberRole::Primary, "primary"), None);
    }

    #[test]
    fn roles_from_is_master() {
        assert_eq!(role_of(&doc! {"ismaster": true, "setName": "rs0"}), MemberRole::Primary);
        assert_eq!(role_of(&doc! {"ismaster": false, "secondary": true, "setName": "rs0"}), MemberRole::Secondary);
        assert_eq!(role_of(&doc! {"ismaster": true}), MemberRole::Standalone);
        assert_eq!(role_of(&doc! {"ismaster": true, "msg": "isdbgrid"}), MemberRole::Unknown);
    }
}

//! The filter, diff and merge drivers a repository's configuration defines, each to be given
//! empty programs.
//!
//! A driver runs when an attribute names it (`* filter=x` in a `.gitattributes` the agent can
//! write) and the configuration defines it (`filter.x.clean`). Attributes cannot be turned off
//! by name, but drivers can: git runs no clean, smudge or process filter whose program is
//! empty, no diff command or textconv that is empty, no merge driver that is empty. So tether
//! asks the configuration git will read (with includes, as git follows them) which drivers it
//! defines, and empties every program of each. A filter marked `required` then fails the
//! command instead of passing the file through: a stricter answer, never a laxer one.
//!
//! The listing is read whole or not at all ([`LISTING_BYTES`]): a configuration that defines a
//! driver first and then more names than the cap holds must not leave that first driver out of
//! the overrides, so a listing past the cap refuses the command (see [`crate::GitRepo::run`]).
//! Only the commands on a person's own repository need this; tether's snapshot repository
//! defines no driver at all (see [`crate::Snapshots`]).

use crate::neutral::DRIVER_PROGRAMS;

/// The `git config` arguments that list every key of a driver section, by name.
pub const LIST_ARGS: &[&str] = &[
    "config",
    "--null",
    "--name-only",
    "--get-regexp",
    r"^(filter|diff|merge)\.",
];

/// The most of a listing read: past it, the command is refused.
pub const LISTING_BYTES: usize = 1 << 20;

/// The overrides that leave every driver named in `listing` (the output of [`LIST_ARGS`], whole:
/// key names, each ended by NUL) without a program; `None` when one cannot be named back to git
/// (a driver's name that is not UTF-8: the command is then refused).
pub fn overrides(listing: &[u8]) -> Option<Vec<(String, String)>> {
    let mut drivers: Vec<(&str, &str)> = Vec::new();
    for name in listing.split(|b| *b == 0).filter(|n| !n.is_empty()) {
        let name = std::str::from_utf8(name).ok()?;
        let Some((section, rest)) = name.split_once('.') else {
            continue;
        };
        // `<section>.<driver>.<key>`: the driver is everything between (it may hold dots).
        let Some((driver, _key)) = rest.rsplit_once('.') else {
            continue;
        };
        let section = section.to_ascii_lowercase();
        let Some((known, _)) = DRIVER_PROGRAMS.iter().find(|(s, _)| *s == section) else {
            continue;
        };
        if !drivers.contains(&(known, driver)) {
            drivers.push((known, driver));
        }
    }
    let mut out = Vec::new();
    for (section, driver) in drivers {
        let keys = DRIVER_PROGRAMS
            .iter()
            .find(|(s, _)| *s == section)
            .map_or(&[][..], |(_, k)| k);
        for key in keys {
            out.push((format!("{section}.{driver}.{key}"), String::new()));
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_program_of_every_defined_driver_is_emptied() {
        let listing = "filter.lfs.clean\0filter.lfs.required\0diff.a.b.textconv\0\
                       diff.external\0merge.ours.driver\0filter.lfs.smudge\0";
        let got = overrides(listing.as_bytes()).unwrap();
        let keys: Vec<&str> = got.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            keys,
            [
                "filter.lfs.clean",
                "filter.lfs.smudge",
                "filter.lfs.process",
                "diff.a.b.command",
                "diff.a.b.textconv",
                "merge.ours.driver",
            ]
        );
        assert!(got.iter().all(|(_, v)| v.is_empty()));
        assert_eq!(overrides(b""), Some(Vec::new()));
        assert_eq!(
            overrides(b"filter.\xff.clean\0"),
            None,
            "not UTF-8: refused"
        );
    }

    proptest::proptest! {
        /// Whatever a listing holds, every driver it names in a known section has every program
        /// key emptied, or the listing is refused whole.
        #[test]
        fn every_named_driver_is_left_without_a_program(
            names in proptest::collection::vec(
                (
                    proptest::sample::select(vec!["filter", "diff", "merge", "FILTER", "core"]),
                    "[a-zA-Z0-9._ \"-]{1,12}",
                    proptest::sample::select(vec!["clean", "smudge", "process", "textconv",
                                                  "command", "driver", "required", "x"]),
                ),
                0..40,
            ),
            junk in proptest::collection::vec(proptest::num::u8::ANY, 0..64),
        ) {
            let mut listing = Vec::new();
            for (section, driver, key) in &names {
                listing.extend_from_slice(format!("{section}.{driver}.{key}").as_bytes());
                listing.push(0);
            }
            listing.extend_from_slice(&junk);
            match overrides(&listing) {
                None => proptest::prop_assert!(std::str::from_utf8(&junk).is_err()),
                Some(got) => {
                    for (section, driver, _) in &names {
                        let section = section.to_ascii_lowercase();
                        let Some((_, keys)) =
                            DRIVER_PROGRAMS.iter().find(|(s, _)| *s == section)
                        else {
                            continue;
                        };
                        for key in *keys {
                            let want = format!("{section}.{driver}.{key}");
                            proptest::prop_assert!(
                                got.iter().any(|(k, v)| *k == want && v.is_empty()),
                                "{want} missing from {got:?}"
                            );
                        }
                    }
                }
            }
        }
    }
}

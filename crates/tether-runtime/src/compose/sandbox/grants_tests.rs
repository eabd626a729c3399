use std::path::{Path, PathBuf};

use proptest::prelude::*;

use super::*;

fn place(path: &str, real: Option<&str>) -> Place {
    Place {
        path: PathBuf::from(path),
        real: real.map(PathBuf::from),
    }
}

fn same(path: &str) -> Place {
    place(path, Some(path))
}

fn ground() -> Ground {
    Ground {
        home: Some(same("/home/ana")),
        writable: vec![same("/work/proj"), same("/tmp/tether-run-1")],
    }
}

fn asked(source: Source, place: Place) -> Asked {
    Asked { source, place }
}

#[test]
fn a_configured_path_that_is_or_holds_the_home_directory_is_refused_naming_the_setting() {
    for (source, path, real) in [
        (Source::Readable, "/", "/"),
        (Source::Readable, "/home/ana", "/home/ana"),
        (Source::Writable, "/home", "/home"),
        (Source::Readable, "/home/ana/src/../..", "/home"),
        // A link of the person's that leads to the home directory.
        (Source::Readable, "/opt/everything", "/"),
    ] {
        let err = decide(&ground(), &[asked(source, place(path, Some(real)))]).unwrap_err();
        let said = err.to_string();
        assert!(said.contains(source.setting().unwrap()), "{said}");
        assert!(said.contains(path), "{said}");
    }
}

#[test]
fn a_found_path_that_holds_the_home_directory_is_left_out_and_said() {
    let got = decide(&ground(), &[asked(Source::Found, same("/"))]).unwrap();
    assert!(got.grants.is_empty());
    assert_eq!(
        got.left_out,
        [LeftOut::HoldsHome {
            path: PathBuf::from("/")
        }]
    );
}

#[test]
fn a_path_inside_the_working_tree_whose_links_lead_out_grants_nothing() {
    for real in ["/etc", "/", "/home/ana"] {
        let got = decide(
            &ground(),
            &[asked(
                Source::Readable,
                place("/work/proj/vendor/sdk", Some(real)),
            )],
        )
        .unwrap();
        assert!(got.grants.is_empty(), "{got:?}");
        assert!(
            got.left_out[0].to_string().contains("links lead out"),
            "{}",
            got.left_out[0]
        );
    }
}

#[test]
fn a_path_inside_the_working_tree_is_granted_without_following_links() {
    let got = decide(
        &ground(),
        &[asked(
            Source::Readable,
            place("/work/proj/vendor/sdk", Some("/work/proj/third_party/sdk")),
        )],
    )
    .unwrap();
    assert_eq!(
        got.grants,
        [Grant {
            path: PathBuf::from("/work/proj/third_party/sdk"),
            access: Access::Read,
            reach: Reach::Unlinked,
            source: Source::Readable,
        }]
    );
}

#[test]
fn a_path_inside_a_configured_writable_tree_is_the_agents_too() {
    let got = decide(
        &ground(),
        &[
            asked(Source::Writable, same("/data/shared")),
            asked(Source::Readable, place("/data/shared/sdk", Some("/"))),
        ],
    )
    .unwrap();
    assert_eq!(got.grants.len(), 1, "{got:?}");
    assert_eq!(got.grants[0].reach, Reach::Followed);
    assert_eq!(got.left_out.len(), 1);
}

#[test]
fn the_persons_own_paths_and_tethers_are_granted_as_written() {
    let got = decide(
        &ground(),
        &[
            asked(
                Source::Readable,
                place("/home/ana/.config/gh", Some("/dots/gh")),
            ),
            asked(Source::Writable, same("/home/ana/.cargo/registry")),
            asked(Source::Made, same("/srv/repo/.git")),
            asked(Source::Found, same("/home/ana/.cargo/bin")),
        ],
    )
    .unwrap();
    let reaches: Vec<(&Path, Access, Reach)> = got
        .grants
        .iter()
        .map(|g| (g.path.as_path(), g.access, g.reach))
        .collect();
    assert_eq!(
        reaches,
        [
            (
                Path::new("/home/ana/.config/gh"),
                Access::Read,
                Reach::Followed
            ),
            (
                Path::new("/home/ana/.cargo/registry"),
                Access::Write,
                Reach::Followed
            ),
            (Path::new("/srv/repo/.git"), Access::Read, Reach::Followed),
            (
                Path::new("/home/ana/.cargo/bin"),
                Access::Read,
                Reach::Followed
            ),
        ]
    );
    assert!(got.left_out.is_empty());
}

/// Paths built from names that matter here: the root, the home directory's parts, the working
/// tree, `.` and `..`.
fn path() -> impl Strategy<Value = PathBuf> {
    let part = prop::sample::select(vec![
        "home",
        "ana",
        "work",
        "proj",
        "sdk",
        "..",
        ".",
        "tmp",
        "etc",
        "tether-run-1",
    ]);
    prop::collection::vec(part, 0..6).prop_map(|parts| {
        let mut p = PathBuf::from("/");
        for part in parts {
            p.push(part);
        }
        p
    })
}

fn a_place() -> impl Strategy<Value = Place> {
    (path(), prop::option::of(path())).prop_map(|(path, real)| Place {
        path,
        // A resolved path never holds `.` or `..`.
        real: real.map(|r| lexical(&r)),
    })
}

fn source() -> impl Strategy<Value = Source> {
    prop::sample::select(vec![
        Source::Readable,
        Source::Writable,
        Source::Found,
        Source::Agent,
        Source::Made,
    ])
}

fn a_ground() -> impl Strategy<Value = Ground> {
    (
        prop::option::of(a_place()),
        prop::collection::vec(a_place(), 0..3),
    )
        .prop_map(|(home, writable)| Ground { home, writable })
}

/// Whether `path` is `/`, a home directory of `ground` or a directory holding one.
fn holds_home(ground: &Ground, path: &Path) -> bool {
    path == Path::new("/")
        || ground
            .home
            .iter()
            .flat_map(Place::forms)
            .any(|home| home.starts_with(path))
}

proptest! {
    #[test]
    fn no_grant_is_the_root_or_holds_the_home_directory(
        ground in a_ground(),
        asked in prop::collection::vec((source(), a_place()), 0..6),
    ) {
        let asked: Vec<Asked> = asked
            .into_iter()
            .map(|(source, place)| Asked { source, place })
            .collect();
        // The trees the agent writes, each with the one asking for it (not an area to itself),
        // never the root or a directory holding the home directory.
        let areas: Vec<(Option<usize>, PathBuf)> = ground
            .writable
            .iter()
            .map(|p| (None, p))
            .chain(
                asked
                    .iter()
                    .enumerate()
                    .filter(|(_, a)| a.source == Source::Writable)
                    .map(|(i, a)| (Some(i), &a.place)),
            )
            .flat_map(|(i, p)| p.forms().map(move |f| (i, f)))
            .filter(|(_, f)| !holds_home(&ground, f))
            .collect();
        let in_area = |i: usize, a: &Asked| {
            a.place.forms().any(|f| {
                areas
                    .iter()
                    .any(|(by, area)| *by != Some(i) && f != *area && f.starts_with(area))
            })
        };
        // A configured path is refused when, as the person wrote it (or, outside the agent's
        // trees, as its links lead), it is the root or holds the home directory.
        let configured_holds = asked.iter().enumerate().any(|(i, a)| {
            a.source.setting().is_some()
                && if in_area(i, a) {
                    holds_home(&ground, &lexical(&a.place.path))
                } else {
                    a.place.forms().any(|f| holds_home(&ground, &f))
                }
        });
        match decide(&ground, &asked) {
            Err(GrantError::HoldsHome { .. }) => prop_assert!(configured_holds),
            Ok(decided) => {
                prop_assert!(!configured_holds);
                for grant in &decided.grants {
                    // Never the root, the home directory or a directory holding it.
                    prop_assert!(!holds_home(&ground, &lexical(&grant.path)), "{grant:?}");
                    // It answers one of the paths asked for, as written or as it resolves: one
                    // that does not resolve to the root or the home directory either, and that,
                    // inside a tree the agent writes, is opened without links and only where
                    // it resolves inside such a tree.
                    let answers = |i: usize, a: &Asked| {
                        let named = a.source == grant.source
                            && (a.place.forms().any(|f| f == grant.path) || a.place.path == grant.path);
                        let real_ok = a.place.real.as_ref().is_none_or(|r| !holds_home(&ground, r));
                        let reach_ok = if in_area(i, a) {
                            grant.reach == Reach::Unlinked
                                && (a.place.real.is_none()
                                    || areas
                                        .iter()
                                        .any(|(by, area)| *by != Some(i) && grant.path.starts_with(area)))
                        } else {
                            grant.reach == Reach::Followed
                        };
                        named && real_ok && reach_ok
                    };
                    prop_assert!(
                        asked.iter().enumerate().any(|(i, a)| answers(i, a)),
                        "{grant:?} answers nothing asked"
                    );
                }
            }
        }
    }
}

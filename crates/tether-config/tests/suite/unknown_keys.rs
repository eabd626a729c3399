//! Unknown keys are errors, with the closest valid key suggested when one is close.

use super::{problem, problems};

#[test]
fn a_misspelt_top_level_key_suggests_the_key() {
    assert_eq!(
        problem("\nplna = \"plan.md\"\n"),
        "tether.toml:2: plna: unknown key; did you mean `plan`?"
    );
}

#[test]
fn a_misspelt_table_suggests_the_table() {
    assert_eq!(
        problem("[humna]\nthreshold = 3\n"),
        "tether.toml:1: humna: unknown table; did you mean `human`?"
    );
    assert_eq!(
        problem("[exector]\nkind = \"pi\"\n"),
        "tether.toml:1: exector: unknown table; did you mean `executor`?"
    );
}

#[test]
fn a_misspelt_nested_key_suggests_the_key() {
    assert_eq!(
        problem("[loop]\nspin_guard = 2\nmax_iteratons = 50\n"),
        "tether.toml:3: loop.max_iteratons: unknown key; did you mean `max_iterations`?"
    );
}

#[test]
fn suggestions_cover_every_table() {
    let cases = [
        (
            "[model]\napi = \"anthropic\"\nbase_url = \"http://h\"\nmodel = \"m\"\nmodle = 1\n",
            "tether.toml:5: model.modle: unknown key; did you mean `model`?",
        ),
        (
            "[judge]\napi = \"anthropic\"\nbase_url = \"http://h\"\nmodel = \"m\"\nsame-model = true\n",
            "tether.toml:5: judge.same-model: unknown key; did you mean `same_model`?",
        ),
        (
            "[human]\ntimeout = 60\n",
            "tether.toml:2: human.timeout: unknown key; did you mean `timeout_secs`?",
        ),
        (
            "[human]\nchanels = []\n",
            "tether.toml:2: human.chanels: unknown key; did you mean `channels`?",
        ),
        (
            "[pager]\nrom = \"x\"\n",
            "tether.toml:2: pager.rom: unknown key; did you mean `room`?",
        ),
        (
            "[side]\napi = \"anthropic\"\nbase_url = \"http://h\"\nmodel = \"m\"\ntimeout_secs = 9\n",
            "tether.toml:5: side.timeout_secs: unknown key; `timeout_secs` belongs in [judge] or [loop_judge] or [human]",
        ),
        (
            "[executor]\nkidn = \"pi\"\n",
            "tether.toml:2: executor.kidn: unknown key; did you mean `kind`?",
        ),
        (
            "[server]\nlisten_addr = \"127.0.0.1:0\"\n",
            "tether.toml:2: server.listen_addr: unknown key; did you mean `listen`?",
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(problem(text), expected, "{text}");
    }
}

#[test]
fn a_key_in_the_wrong_table_names_its_table() {
    assert_eq!(
        problem("max_iterations = 5\n"),
        "tether.toml:1: max_iterations: unknown key; `max_iterations` belongs in [loop]"
    );
    assert_eq!(
        problem("[loop]\nthreshold = 3\n"),
        "tether.toml:2: loop.threshold: unknown key; `threshold` belongs in [human]"
    );
}

#[test]
fn a_far_off_key_gets_no_guess_but_the_valid_keys() {
    assert_eq!(
        problem("[server]\ncolour = \"blue\"\n"),
        "tether.toml:2: server.colour: unknown key; [server] has listen"
    );
    assert_eq!(
        problem("wibble = 1\n"),
        "tether.toml:1: wibble: unknown key; the top level has plan, model, planning, judge, loop_judge, side, \
         loop, human, notify, pager, executor, server, store, sandbox, run, schedule"
    );
}

#[test]
fn a_table_inside_a_table_is_unknown() {
    assert_eq!(
        problem("[loop.extra]\nx = 1\n"),
        "tether.toml:1: loop.extra: unknown table; [loop] has max_iterations, max_tokens, max_cost_usd, max_duration, escalate_after_rejects, spin_guard, \
         oscillation_repeats, reminder_after, clean_end_reminders, verify_timeout_secs, \
         max_consecutive_failures, context"
    );
}

#[test]
fn every_unknown_key_is_reported() {
    let all = problems("[loop]\nmax_iteratons = 1\nspin_gaurd = 2\nwhatever = 3\n");
    assert_eq!(all.len(), 3, "{all:#?}");
    assert!(all[0].contains("loop.max_iteratons"));
    assert!(all[1].contains("loop.spin_gaurd: unknown key; did you mean `spin_guard`?"));
    assert!(all[2].contains("loop.whatever: unknown key; [loop] has"));
}

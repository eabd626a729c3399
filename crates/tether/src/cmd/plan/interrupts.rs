//! What Ctrl+C does in plan mode, by phase: cancel the agent's turn while it drafts; at the
//! review menu, restore the plan and exit 130; inside `$EDITOR`, nothing (the editor has it).

use std::sync::{Arc, Mutex};

use tether_core::planning::Drafter;
use tokio::runtime::Runtime;
use tokio_util::sync::CancellationToken;

use crate::exit::Exit;

enum Phase {
    Turn(CancellationToken),
    Idle,
    Editor,
}

/// The Ctrl+C watcher and the phase it acts on.
pub struct Interrupts {
    phase: Arc<Mutex<Phase>>,
}

impl Interrupts {
    /// Starts watching Ctrl+C on `runtime`, restoring `drafter`'s plan when it comes at the menu.
    pub fn install(runtime: &Runtime, drafter: &Drafter) -> Self {
        let phase = Arc::new(Mutex::new(Phase::Idle));
        let (plan, baseline) = (drafter.plan().clone(), drafter.baseline().clone());
        let seen = Arc::clone(&phase);
        runtime.spawn(async move {
            while tokio::signal::ctrl_c().await.is_ok() {
                let Ok(phase) = seen.lock() else { return };
                match &*phase {
                    Phase::Turn(cancel) => cancel.cancel(),
                    Phase::Idle => {
                        let _ = baseline.restore(&plan);
                        eprintln!("\ncancelled; {} restored", plan.key);
                        std::process::exit(i32::from(Exit::Interrupted.code()));
                    }
                    Phase::Editor => {}
                }
            }
        });
        Interrupts { phase }
    }

    fn set(&self, phase: Phase) {
        if let Ok(mut p) = self.phase.lock() {
            *p = phase;
        }
    }

    /// A turn starts: Ctrl+C cancels it.
    pub fn turn(&self) -> CancellationToken {
        let cancel = CancellationToken::new();
        self.set(Phase::Turn(cancel.clone()));
        cancel
    }

    /// The review menu: Ctrl+C restores the plan and exits.
    pub fn idle(&self) {
        self.set(Phase::Idle);
    }

    /// The editor is open: Ctrl+C is the editor's.
    pub fn editor(&self) {
        self.set(Phase::Editor);
    }
}

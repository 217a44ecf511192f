//! One file per subcommand; each exposes its clap `Args` and a `run` that prints to stdout
//! and returns a user-facing error message on failure, as a [`Stop`]: a refused input or a
//! failure while running, which exit with different statuses (docs/cli.md).

pub mod compare;
pub mod export;
pub mod no_fit;
pub mod output;
pub mod plan;
pub mod presets;
pub mod scenario_args;
pub mod scenario_flags;
pub mod sim_number;
pub mod simulate;
pub mod sweep;
pub mod sweep_dense;
pub mod sweep_output;
#[cfg(feature = "tui")]
pub mod tui;
pub mod units;
pub mod unused_flags;
pub mod unused_plan_flags;

/// Why a command stopped without its answer, with the message for standard error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// Its input was refused (a flag, a value, a preset or another file it names): exit
    /// status 2, the status of clap's own usage errors, so that a script can tell a wrong
    /// command from a failed one whichever check refused it.
    Refused(String),
    /// It failed while running (the output could not be written, the terminal failed):
    /// exit status 1.
    Failed(String),
}

impl Stop {
    /// The exit status: 2 for a refused input, 1 for a failure while running.
    pub fn exit_status(&self) -> u8 {
        match self {
            Self::Refused(_) => 2,
            Self::Failed(_) => 1,
        }
    }

    /// The message for standard error.
    pub fn message(&self) -> &str {
        match self {
            Self::Refused(m) | Self::Failed(m) => m,
        }
    }
}

/// Every check of the input says what it refuses as a `String`: those are refusals.
impl From<String> for Stop {
    fn from(message: String) -> Self {
        Self::Refused(message)
    }
}

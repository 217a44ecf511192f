//! An abstract run: one schedule generated and simulated with the same cost for every op of
//! a kind (`simulate --costs F,B,W`, `export --costs`, the TUI's lesson), in cost units
//! rather than seconds, memory counted in micro-batch-chunks (see [`SimCosts::abstract_run`]).

use crate::cancel::Cancel;
use crate::schedule::{self, Schedule, ScheduleError, ScheduleInput, ScheduleKind};

use super::{SimCosts, SimError, Simulation};

/// What an abstract run is: the schedule, its sizes, the cost of each op and the
/// schedule's options.
#[derive(Debug, Clone, PartialEq)]
pub struct AbstractRun {
    /// The schedule.
    pub kind: ScheduleKind,
    /// Devices.
    pub p: u32,
    /// Micro-batches.
    pub m: u32,
    /// Chunks per device asked for; the schedule runs with [`ScheduleKind::chunks`] of it
    /// (1 for the one-chunk schedules).
    pub chunks: u32,
    /// Cost of one forward (F), input-gradient backward (B) and weight-gradient backward (W)
    /// of a chunk; a fused backward costs B + W.
    pub costs: [f64; 3],
    /// Transfer time between two devices.
    pub comm: f64,
    /// One-way host copy time of one chunk-activation for the offloading schedules (`None`:
    /// one forward).
    pub offload_cost: Option<f64>,
    /// Memory limit of the schedules that take one, in chunk-activations.
    pub mem_limit: Option<f64>,
    /// Group size of `gis`/`gis-offload`.
    pub group_size: Option<u32>,
    /// Chunks offloaded by `gis-offload`.
    pub offload_chunks: Option<u32>,
}

/// Why an abstract run could not be made.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AbstractRunError {
    /// The schedule does not take these sizes or options.
    #[error(transparent)]
    Schedule(#[from] ScheduleError),
    /// The simulation refused the costs (a non-finite or negative cost, or a bug).
    #[error(transparent)]
    Sim(#[from] SimError),
}

/// A generated schedule and its simulation.
#[derive(Debug, Clone, PartialEq)]
pub struct AbstractOutcome {
    /// The op order of every device.
    pub schedule: Schedule,
    /// Its simulation with the run's costs.
    pub simulation: Simulation,
}

impl AbstractRun {
    /// `kind` on `p` devices with `m` micro-batches, every op costing 1, no transfer time,
    /// two chunks where the schedule takes them, its options at their defaults.
    pub fn new(kind: ScheduleKind, p: u32, m: u32) -> AbstractRun {
        AbstractRun {
            kind,
            p,
            m,
            chunks: 2,
            costs: [1.0, 1.0, 1.0],
            comm: 0.0,
            offload_cost: None,
            mem_limit: None,
            group_size: None,
            offload_chunks: None,
        }
    }

    /// The generator's input of this run (sizes checked first, so that no grid is allocated
    /// for sizes the schedule refuses).
    pub fn schedule_input(&self) -> Result<ScheduleInput, ScheduleError> {
        schedule::check_size(self.kind, self.p, self.m, self.chunks)?;
        let [f, b, w] = self.costs;
        let v = self.kind.chunks(self.chunks);
        let mut input = ScheduleInput::uniform(self.p, self.m, v, f, b, w, self.comm);
        input.mem_limit = self.mem_limit;
        input.group_size = self.group_size;
        input.offload_chunks = self.offload_chunks;
        input.offload_cost = Some(self.offload_s());
        Ok(input)
    }

    /// The one-way host copy time of a chunk-activation.
    fn offload_s(&self) -> f64 {
        self.offload_cost.unwrap_or(self.costs[0])
    }

    /// Generates the schedule and simulates it (stopping with a cancelled error once
    /// `cancel` is set).
    pub fn simulate(&self, cancel: &Cancel) -> Result<AbstractOutcome, AbstractRunError> {
        let input = self.schedule_input()?;
        let schedule = schedule::generate_cancellable(self.kind, &input, cancel)?;
        let [f, b, w] = self.costs;
        let costs = SimCosts::abstract_run(&schedule, f, b, w, self.comm, self.offload_s());
        let simulation = super::simulate(&schedule, &costs)?;
        Ok(AbstractOutcome {
            schedule,
            simulation,
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn one_f_one_b_with_unit_costs_has_its_closed_form() {
        let (p, m) = (4, 8);
        let run = AbstractRun::new(ScheduleKind::OneFOneB, p, m);
        let out = run.simulate(&Cancel::never()).unwrap();
        assert_eq!(out.schedule.v, 1);
        // (m + p - 1) slots of F + fused BW (cost 3).
        let want = f64::from(m + p - 1) * 3.0;
        assert!((out.simulation.makespan - want).abs() < 1e-9);
    }

    #[test]
    fn sizes_the_schedule_refuses_are_a_schedule_error() {
        let run = AbstractRun::new(ScheduleKind::OneFOneB, 0, 8);
        assert!(matches!(
            run.simulate(&Cancel::never()),
            Err(AbstractRunError::Schedule(_))
        ));
    }
}

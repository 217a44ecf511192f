//! The interactive terminal UI: app state, actions, a pure update function, a solver
//! worker thread and views that only read state.

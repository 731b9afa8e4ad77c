//! The sched_ext class (kernel/sched/ext.c): hosts a policy written
//! against [`ExtOps`], the simulator's `struct sched_ext_ops`.

pub mod ctx;
pub mod dsq;
pub mod ops;
pub mod state;

pub use ctx::{Ctx, TaskView};
pub use ops::*;
pub use state::{Hook, OnError};

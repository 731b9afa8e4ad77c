//! What a language bridge (crates/schedlab-py/src/policy.rs) needs beyond
//! the kfuncs: a way to end the run when the hosted policy's own code
//! failed (a Python exception), whatever `ext_on_error` says.

use super::ctx::Ctx;
use super::ops::ExitKind;

impl<T: Default> Ctx<'_, T> {
    /// Stop the whole run with `msg` as its error (`SimError::Policy`,
    /// exit code 2 at the CLI), word for word, and disable the policy so
    /// that no further op is called for a live policy. Unlike
    /// [`Ctx::error`] this does not fall back to the fair class under
    /// `ext_on_error=1`: a crash of the hosting language is not a policy
    /// decision the kernel could survive.
    pub fn fail_run(&mut self, msg: String) {
        let short = msg.lines().next().unwrap_or_default().to_string();
        self.m.fail(msg);
        self.st
            .record_exit(ExitKind::Error, self.m, self.hook, self.cpu, short);
    }
}

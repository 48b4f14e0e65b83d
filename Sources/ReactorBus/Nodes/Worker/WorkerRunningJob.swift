import ReactorCore

/// A job whose effect a ``WorkerLoop`` is running.
///
/// Not nested in the generic loop: a type nested there is generic too, and every access to the
/// loop's dictionary of them looked up the dictionary's type metadata at run time.
struct WorkerRunningJob {
    /// The token its events carry.
    let run: UInt64
    /// Cancels the effect.
    let effect: EffectRun
}

/// Checks `probe` every few milliseconds until it returns a value or `timeout` passes: how a
/// test waits for an event another thread or process brings, with a deadline instead of a
/// fixed sleep.
package func eventually<T>(within timeout: Duration = promptly, _ probe: () -> T?) async -> T? {
    let deadline = ContinuousClock.now + timeout
    while true {
        if let value = probe() { return value }
        if ContinuousClock.now >= deadline { return nil }
        try? await Task.sleep(for: .milliseconds(5))
    }
}

/// Waits until `condition` holds or `timeout` passes; returns whether it held.
package func eventually(within timeout: Duration = promptly, _ condition: () -> Bool) async -> Bool {
    await eventually(within: timeout) { condition() ? true : nil } ?? false
}

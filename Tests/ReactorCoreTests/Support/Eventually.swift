/// Polls `condition` every 2 ms until it holds or `timeout` passes; the last check decides.
func eventually(within timeout: Duration = .seconds(20), _ condition: () async -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(2))
    }
    return await condition()
}

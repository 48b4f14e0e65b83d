extension Store {
    /// The values of `projection` from now on, starting with the current one, each only when it
    /// differs from the one before (the seed libraries' `transform(state:)` with
    /// `removeDuplicates`), with the version it was reached at.
    public func updates<Value>(of projection: Projection<R.State, Value>) -> AsyncStream<Snapshot<Value>> {
        let source = updates()
        let (stream, continuation) = AsyncStream.makeStream(of: Snapshot<Value>.self)
        let task = Task {
            var last: Value?
            for await snapshot in source {
                let value = projection.value(snapshot.state)
                guard value != last else { continue }
                last = value
                continuation.yield(Snapshot(version: snapshot.version, state: value))
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }
}

import ZeroMQ

final class LoopTaskExecutor: TaskExecutor {
    let jobs: Mailbox<UnownedJob>

    init() throws(ZMQError) {
        jobs = try Mailbox<UnownedJob>.forNode()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        jobs.post(UnownedJob(job))
    }

    func runPending() {
        let executor = asUnownedTaskExecutor()
        for job in jobs.drain() { job.runSynchronously(on: executor) }
    }
}

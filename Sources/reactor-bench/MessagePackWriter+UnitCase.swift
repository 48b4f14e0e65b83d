import MessagePack

extension MessagePackWriter {
    /// Packs a Codable enum case without values as the app's coders encode it, `{"name":{}}`,
    /// with msgpack-c calls: the counter's `countUp`, `slowIncrease` and `increase`, which the
    /// limit baselines (``PipelineBaselineAuthority``, ``PipelineBaselineWorker``) send without
    /// `Codable`.
    func packUnitCase(_ name: String) {
        packMapHeader(1)
        packString(name)
        packMapHeader(0)
    }
}

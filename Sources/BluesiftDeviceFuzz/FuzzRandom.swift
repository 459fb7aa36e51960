import BluesiftWire

/// The device fuzzer's generator: every decision comes from it, so a `--seed` and the device's
/// behaviour fix the run. No clock is read for a decision.
public typealias FuzzRandom = SplitMix64

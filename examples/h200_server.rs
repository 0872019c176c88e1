//! Simulated H200 serving Qwen3.5-35B-A3B with vLLM: runs the seed study end to end.

fn main() {
    println!("h200_server: the simulator is not built yet (see the engine/driver issue).");
}

//! The `servebench` command-line tool.

fn main() {
    println!("servebench {}", env!("CARGO_PKG_VERSION"));
}

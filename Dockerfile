# The servebench CLI (and the simulated-H200 example server) in a small image, for the
# Kubernetes Jobs in deploy/k8s/ or any container runtime:
#
#   docker build -t servebench:latest .
#   docker run --rm servebench:latest bench --target http://HOST:8000 --profile throughput
#   docker run --rm -p 8000:8000 --entrypoint h200_server servebench:latest \
#       --serve 0.0.0.0:8000 --speed 10
#
# Build stage: the crate's minimum Rust, the locked dependency versions, release profile.
FROM rust:1.88-slim-bookworm AS build
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY src ./src
COPY examples ./examples
COPY benches ./benches
RUN cargo build --release --locked --bin servebench --example h200_server \
 && mkdir -p /out \
 && cp target/release/servebench target/release/examples/h200_server /out/

# Run stage: the two binaries on a slim Debian, as an unprivileged user.
FROM debian:bookworm-slim
COPY --from=build /out/servebench /out/h200_server /usr/local/bin/
USER 65532:65532
WORKDIR /runs
ENTRYPOINT ["servebench"]
CMD ["--help"]

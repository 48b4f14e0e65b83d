# Runtime image for reactor-node.
#
# The base is built locally by scripts/docker/build-base-image.sh (Debian
# bookworm minbase + libzmq5 + libmsgpackc2 + libmicrohttpd12, imported with
# `docker import`):
# no registry is involved, and the classic builder does not pull a FROM image
# that exists locally. With a registry, see docs/DEPLOYMENT.md for the
# equivalent `FROM debian:bookworm-slim` variant.
#
# The binary is built outside (swift build -c release --static-swift-stdlib,
# so it needs only libc, libstdc++, libzmq5, libmsgpackc2 and libmicrohttpd12
# at run time) and
# copied in; scripts/docker/build-images.sh does both steps.
ARG BASE_IMAGE=reactorbus-base:bookworm
FROM ${BASE_IMAGE}

# Path of the binary inside the build context. build-images.sh uses a
# context holding only the binary; from the repository root pass
# --build-arg REACTOR_NODE_BINARY=.build/x86_64-unknown-linux-gnu/release/reactor-node
ARG REACTOR_NODE_BINARY=reactor-node

# An unprivileged user that owns /data. A named volume mounted at /data
# starts as a copy of this directory, ownership included, so the authority's
# journal is writable without running as root.
RUN groupadd --system --gid 10001 reactor \
 && useradd --system --uid 10001 --gid reactor --home-dir /data --no-create-home \
        --shell /usr/sbin/nologin reactor \
 && install -d -o reactor -g reactor -m 0750 /data

COPY ${REACTOR_NODE_BINARY} /usr/local/bin/reactor-node

USER reactor:reactor
WORKDIR /data
# 7001 actions, 7002 workers, 7003 feed (authority); 9464 metrics (with --metrics).
EXPOSE 7001 7002 7003 9464
ENTRYPOINT ["reactor-node"]

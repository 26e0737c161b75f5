# smtlab in a container: a build stage compiles smtlab and the static guest agent; the runtime
# stage carries QEMU, libvirt's embedded QEMU driver and the image tools.  Not privileged:
#   docker run --rm --device /dev/kvm -v "$PWD/results:/results" -v smtlab-cache:/cache IMAGE run recipes/smoke.yaml
# Without --device /dev/kvm it runs under TCG and says so.  The host's own noise floor (BENCHMARKS.md):
#   docker run --rm --entrypoint /opt/smtlab/build/bin/host_noise IMAGE --rounds 60
ARG BASE=debian:bookworm

FROM ${BASE} AS build
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      cmake ninja-build g++ pkg-config libvirt-dev libyaml-cpp-dev libcli11-dev catch2 \
      nlohmann-json3-dev libfmt-dev libboost-math-dev libssl-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY CMakeLists.txt ./
COPY lab lab
COPY tests tests
COPY bench bench
RUN cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release -DSMTLAB_TESTS=OFF \
 && cmake --build /build --target smtlab smtlab-guest host_noise

FROM ${BASE} AS runtime
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libvirt0 libvirt-daemon-driver-qemu qemu-system-x86 qemu-utils libyaml-cpp0.7 libfmt9 \
      libssl3 mmdebstrap cpio xz-utils zstd lz4 e2fsprogs ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && (getent group kvm >/dev/null || groupadd --system kvm) \
 && groupadd --system libvirt-qemu \
 && useradd --system --gid kvm --no-create-home --shell /usr/sbin/nologin libvirt-qemu
COPY --from=build /build/bin/smtlab /build/bin/smtlab-guest /build/bin/host_noise /opt/smtlab/build/bin/
COPY kernels /opt/smtlab/kernels
COPY images /opt/smtlab/images
COPY recipes /opt/smtlab/recipes
ENV SMTLAB_HOME=/opt/smtlab SMTLAB_CACHE=/cache SMTLAB_RESULTS=/results
WORKDIR /opt/smtlab
VOLUME ["/cache", "/results"]
ENTRYPOINT ["/opt/smtlab/build/bin/smtlab"]
CMD ["--help"]

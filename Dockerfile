# The stagegate image: the binary, Release build, with the repository's scenarios, corpora and
# rubrics under /work, for `stagegate k8s` (docs/kubernetes.md) or any container run.
#
#   docker build -t registry.example/stagegate:0.1 .
#   docker run --rm registry.example/stagegate:0.1 validate scenarios/demo.yaml

# Build stage: the packages of scripts/packages.txt (compiler, CMake, Ninja, the libraries' -dev
# packages), then the executable alone; the tests are built and run by scripts/test.sh instead.
FROM debian:12 AS build
ENV DEBIAN_FRONTEND=noninteractive
COPY scripts/packages.txt /src/scripts/packages.txt
RUN apt-get update \
    && xargs -a /src/scripts/packages.txt apt-get install -y --no-install-recommends \
    && rm -rf /var/lib/apt/lists/*
COPY . /src
RUN cmake -S /src -B /src/build -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTAGEGATE_TESTS=OFF \
    && ninja -C /src/build stagegate

# Runtime stage: the shared libraries the executable links (their dependencies follow), and CA
# certificates for https targets. tar is in the base image, which `kubectl cp` needs.
FROM debian:12-slim
ENV DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
    && apt-get install -y --no-install-recommends \
       ca-certificates libcurl4 libhttp-parser2.9 libicu72 libpcre2-8-0 libre2-9 \
       libsentencepiece0 libsimdjson14 libsqlite3-0 libssl3 libyaml-cpp0.7 \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/build/stagegate /usr/local/bin/stagegate
COPY scenarios/ /work/scenarios/
COPY corpus/ /work/corpus/
COPY rubrics/ /work/rubrics/
WORKDIR /work
# `stagegate k8s` gives each pod a command of its own, which replaces this entry point.
ENTRYPOINT ["stagegate"]
CMD ["--help"]

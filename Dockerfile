# The controller image (docs/install.md, "The image").
#
#   docker build -t REGISTRY/scheduled-pod-autoscaler:0.2.0 .
#   buildah bud -t REGISTRY/scheduled-pod-autoscaler:0.2.0 .
#
# Two stages on Debian 12's Python 3.11. The build stage makes the package's wheel and installs
# it into a virtualenv; the runtime stage is a distroless Python image (no shell, no package
# manager, no compiler) that receives only that virtualenv. Both stages must have the same
# interpreter at the same path (/usr/bin/python3.11), since the virtualenv links to it: that is
# why the build stage is Debian with its python3 rather than the python:3.11 images, whose
# interpreter is elsewhere. The bases are arguments so that a registry mirror, or the
# equivalent images made from Debian packages for the tests (hack/image/bases.sh), can be used.
ARG BUILD_IMAGE=docker.io/library/debian:bookworm-slim
ARG RUNTIME_IMAGE=gcr.io/distroless/python3-debian12:nonroot

FROM ${BUILD_IMAGE} AS build
# pip's own settings, for a private index or a TLS-intercepting proxy's CA (a file mounted into
# the build, e.g. `buildah bud -v /etc/ssl/certs/ca-certificates.crt:/run/build-ca.crt:ro
# --build-arg PIP_CERT=/run/build-ca.crt`). Arguments of this stage never reach the image.
ARG PIP_INDEX_URL
ARG PIP_CERT
# The commit's time, for a reproducible build (`make release`, docs/development.md,
# "Releasing"): the wheel's files are dated with it, and pip then compiles hash-checked
# bytecode, which holds no install time.
ARG SOURCE_DATE_EPOCH
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3-venv \
    && rm -rf /var/lib/apt/lists/*
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
# Everything pip installs here is pinned by hash (docs/install.md, "Supply chain"; `make lock`
# writes these files): first the build stage's own tools.
COPY hack/image/requirements.txt hack/image/build-requirements.txt ./hack/image/
RUN python3 -m venv /opt/build \
    && /opt/build/bin/pip install --require-hashes --no-deps -r hack/image/build-requirements.txt
# Metadata first, so that a change of the code alone does not invalidate this layer's cache.
COPY setup.py setup.cfg pyproject.toml README.md LICENSE ./
COPY spa ./spa
# The wheel, as published to PyPI, built by the backend pyproject.toml names (from the pinned
# list above, hence no build isolation).
RUN /opt/build/bin/pip wheel --no-deps --no-build-isolation --wheel-dir /wheels .
# The dependencies exactly as locked, then the wheel alone; `pip check` proves the lock
# satisfies the package's own requirements. pip compiles the bytecode here, because the
# running container's root filesystem is read-only. tzdata is a dependency of the package, so
# the zone database comes with it rather than from the OS. Then what the controller never uses
# goes: pip and setuptools (nothing installs at run time), and the kubernetes package's
# generated API classes, synchronous and asyncio (kubernetes/client/api and
# kubernetes/aio/client/api, 77 MB), and both clients' model classes (kubernetes/client/models
# and kubernetes/aio/client/models, 23 MB each; each package's __init__ stays, it loads them
# lazily):
# spa.kube speaks HTTP itself and only loads its configuration with kubernetes.aio.config
# (docs/architecture.md, "The client");
# tests/unit/project/test_dockerfile.py checks that no spa module imports them, and
# tests/packaging/test_image.py runs the controller without them. Last, the SBOM of what is
# left (CycloneDX JSON, /opt/spa/sbom.cdx.json), read from the installed distributions, without
# the random serial number and the time that would make each build's differ.
RUN python3 -m venv /opt/spa \
    && /opt/spa/bin/pip install --require-hashes --no-deps -r hack/image/requirements.txt \
    && /opt/spa/bin/pip install --no-deps /wheels/*.whl \
    && /opt/spa/bin/pip check \
    && /opt/spa/bin/python -m pip uninstall --yes pip setuptools \
    && rm -rf /opt/spa/lib/python3.11/site-packages/kubernetes/client/api \
              /opt/spa/lib/python3.11/site-packages/kubernetes/aio/client/api \
    && find /opt/spa/lib/python3.11/site-packages/kubernetes/client/models \
            /opt/spa/lib/python3.11/site-packages/kubernetes/aio/client/models -type f \
            ! -name '__init__.*' -delete \
    && /opt/build/bin/cyclonedx-py environment --output-format JSON --output-reproducible \
           --output-file /opt/spa/sbom.cdx.json /opt/spa/bin/python \
    && /opt/spa/bin/spa --version

FROM ${RUNTIME_IMAGE}
ARG VERSION=0.2.0
ARG REVISION=unknown
LABEL org.opencontainers.image.title="scheduled-pod-autoscaler" \
      org.opencontainers.image.description="Scheduled scaling for Kubernetes HorizontalPodAutoscalers" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.licenses="MIT" \
      org.opencontainers.image.source="https://github.com/scheduled-pod-autoscaler/scheduled-pod-autoscaler" \
      org.opencontainers.image.documentation="https://github.com/scheduled-pod-autoscaler/scheduled-pod-autoscaler/blob/main/docs/install.md"
COPY --from=build /opt/spa /opt/spa
ENV PATH=/opt/spa/bin:/usr/local/bin:/usr/bin:/bin \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
# uid/gid 65532 (distroless' "nonroot"): the Deployment's runAsUser and runAsGroup are the same
# numbers, which lets the kubelet check runAsNonRoot without reading /etc/passwd.
USER 65532:65532
# Metrics and probes (`spa run` defaults).
EXPOSE 8080 9090
ENTRYPOINT ["/opt/spa/bin/spa"]
CMD ["run"]

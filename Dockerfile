# The controller image. Two stages: the first builds the package into a virtualenv (with pip and
# the build backend), the second copies only that virtualenv onto a clean base, so the image
# holds no compiler cache, no source tree and no pip cache.
# Build: docker build -t REGISTRY/scheduled-pod-autoscaler:0.1.0 .
ARG PYTHON_IMAGE=python:3.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
RUN python -m venv /opt/spa
WORKDIR /src
# Metadata first, so that the dependency layer is rebuilt only when setup.cfg changes.
COPY setup.cfg pyproject.toml README.md ./
COPY spa ./spa
# A regular (not editable) install; pip compiles the bytecode here, because the running
# container's root filesystem is read-only. tzdata is a dependency of the package, so the
# zone database comes with it rather than from the OS.
RUN /opt/spa/bin/pip install . \
    && /opt/spa/bin/spa --help >/dev/null

FROM ${PYTHON_IMAGE}
# uid/gid 65532 (the usual "nonroot"): the Deployment's runAsUser and runAsGroup are the same
# numbers, which lets the kubelet check runAsNonRoot without reading /etc/passwd.
RUN groupadd --system --gid 65532 spa \
    && useradd --system --uid 65532 --gid 65532 --no-create-home \
       --home-dir /nonexistent --shell /usr/sbin/nologin spa
COPY --from=build /opt/spa /opt/spa
ENV PATH=/opt/spa/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
USER 65532:65532
# Metrics and probes (`spa run` defaults).
EXPOSE 8080 9090
ENTRYPOINT ["spa"]
CMD ["run"]

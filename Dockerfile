# The embedded WebArena-Lite sites in one image, for `webrl up --backend docker --images embedded`.
#
# The build context is a wheelhouse made on the host, so the build needs no network (scripts/install-docker.sh
# does all of this):
#   pip wheel --no-deps -w build/docker/context/webrl .
#   python -m webrl.sites.docker.images requirements > build/docker/context/wheelhouse/sites-requirements.txt
#   pip wheel -w build/docker/context/wheelhouse -r build/docker/context/wheelhouse/sites-requirements.txt
#   docker build -f Dockerfile [--build-arg BASE=local/debian-py:bookworm] -t webrl/sites build/docker/context
#
# Only the sites' runtime dependencies go in (webrl itself with --no-deps): no torch, Playwright or DeepSpeed.
ARG BASE=python:3.11-slim
FROM ${BASE}

# The dependencies first, in their own layer: rebuilding for a code change reuses it.
COPY wheelhouse /tmp/wheelhouse
RUN python3 -m venv /opt/webrl \
 && /opt/webrl/bin/pip install -q --no-index --find-links /tmp/wheelhouse \
        -r /tmp/wheelhouse/sites-requirements.txt \
 && rm -rf /tmp/wheelhouse /root/.cache
COPY webrl /tmp/webrl
RUN /opt/webrl/bin/pip install -q --no-index --no-deps /tmp/webrl/*.whl && rm -rf /tmp/webrl /root/.cache

ENV PATH=/opt/webrl/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    WEBRL_STATE_DIR=/var/lib/webrl \
    WEBRL_SITES__HOST=0.0.0.0

# WebArena's ports for instance 0 and the control API; the backend passes the ports of other instances.
EXPOSE 7770 7780 9999 8023 3000 4399 7700
CMD ["python", "-m", "webrl.sites.docker.container"]

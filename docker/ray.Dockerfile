# The Ray head for docker/compose.yaml: rayproject/ray plus what cell code imports on the cluster
# (TensorFlow, tf-keras, and this project's pyjava/console.runtime), pinned like pyproject.toml.
# Ray and Python versions must equal the server's: Ray Client refuses a mismatch.
FROM rayproject/ray:2.60.0-py311-cpu
ENV RAY_USAGE_STATS_ENABLED=0 \
    RAY_DEDUP_LOGS=0 \
    RAY_COLOR_PREFIX=0 \
    TF_CPP_MIN_LOG_LEVEL=2 \
    TF_ENABLE_ONEDNN_OPTS=0 \
    TF_USE_LEGACY_KERAS=1
COPY --chown=ray:users pyproject.toml README.md /tmp/console-src/
COPY --chown=ray:users console/ /tmp/console-src/console/
COPY --chown=ray:users pyjava/ /tmp/console-src/pyjava/
# Every node runs Daft's workers for SQL on the cluster: the same daft as the server, without its requirements.
RUN pip install --no-cache-dir /tmp/console-src && pip install --no-cache-dir --no-deps daft==0.7.26 tqdm==4.67.3 \
    && rm -rf /tmp/console-src

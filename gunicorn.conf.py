"""gunicorn's settings file (read from the working directory): each worker warms up after the
fork, before it takes requests — the model's first inference in a new process and the recall
pipeline's first run cost several times a warm request (the model itself loads once, in the
master, with ``--preload``: config/wsgi.py)."""


def post_worker_init(worker):  # type: ignore[no-untyped-def]
    from config.warmup import warm_recall

    warm_recall()

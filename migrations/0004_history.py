"""File a small summary of every run in per-user buckets, so history pages stay fast at any length."""


def migrate(store):
    from historian_blueprint import history

    history.rebuild(store)

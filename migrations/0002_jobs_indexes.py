"""Index the jobs collection by kind and state, for the one-reindex-at-a-time claim and history."""


def migrate(store):
    store.jobs.create_index([("kind", 1), ("state", 1)], name="kind_state")
    store.jobs.create_index([("created_at", -1)], name="recent")

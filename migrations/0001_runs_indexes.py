"""Index the runs collection for per-user history and permalinks."""


def migrate(store):
    store.runs.create_index([("user_id", 1), ("created_at", -1)], name="user_history")
    store.runs.create_index([("created_at", -1)], name="recent")

"""Index runs by conversation thread (follow-up questions) and the LLM response cache by expiry."""


def migrate(store):
    store.runs.create_index([("thread_id", 1), ("created_at", 1)], name="thread")
    store.collection("llm_cache").create_index([("expires_at", 1)], name="expiry")

"""Admin pages and endpoints: reindex with live progress, job history, per-document errors."""

from __future__ import annotations

from flask import jsonify, redirect, render_template, request, url_for

from historian_blueprint.services import get_store
from historian_blueprint.index import service
from historian_blueprint.web.auth import admin_required, current_identity
from historian_blueprint.web.bodies import ReindexBody, json_body
from historian_blueprint.web.csrf import csrf_token, protect


def job_view(job: dict) -> dict:
    """A job as the page and the API show it (no traceback, percent computed)."""
    progress = job.get("progress") or {}
    total, done = progress.get("total") or 0, progress.get("done") or 0
    phases = {"queued": 0, "scan": 0, "embed": 10, "check": 95, "write": 95, "done": 100}
    base = phases.get(job.get("phase"), 0)
    if job.get("phase") == "embed" and total:
        percent = 10 + 85 * done / total
    elif job.get("phase") == "scan" and total:
        percent = 10 * done / total
    else:
        percent = base
    if job.get("state") not in ("queued", "running"):
        percent = 100 if job.get("state", "").startswith("succeeded") else percent
    timings, counts = job.get("timings") or {}, job.get("counts") or {}
    encoded = counts.get("embedded_chunks")
    rate = round(encoded / timings["encode_s"], 1) if encoded and timings.get("encode_s") else None
    return {k: v for k, v in job.items() if k != "traceback"} | {"id": job["_id"], "percent": round(percent, 1),
                                                                 "chunks_per_s": rate}


@admin_required
def admin_reindex():
    store = get_store()
    history = [job_view(j) for j in service.recent_jobs()]
    active = next((j for j in history if j["state"] in ("queued", "running")), None)
    return render_template(
        "historian/admin_reindex.html",
        serving=service.current_generation(store),
        index_health=service.index_health(),
        documents=store.count_documents(),
        history=history,
        active=active,
        latest=history[0] if history else None,
        failed=service.failed_documents(),
        csrf_token=csrf_token(),
        message=request.args.get("message"),
    )


@admin_required
def admin_reindex_start():
    protect()
    try:
        service.start_reindex(
            full=request.form.get("full") == "1",
            retry_failed=request.form.get("retry_failed") == "1",
            user=current_identity().user_id,
        )
        message = None
    except (service.ReindexBusy, ValueError) as exc:
        message = str(exc)
    return redirect(url_for("historian.admin_reindex", message=message))


@admin_required
def api_jobs():
    """The latest reindex jobs, newest first, each as /api/jobs/<id> gives it (counts, timings, the build's
    rate in chunks per second of encoding), so an operator can read a build without the page."""
    try:
        limit = max(1, min(int(request.args.get("limit", 20)), 100))
    except ValueError:
        return jsonify(error={"code": "bad_request", "message": "limit must be a whole number from 1 to 100"}), 400
    return jsonify(jobs=[job_view(j) for j in service.recent_jobs(limit)])


@admin_required
def api_job(job_id: str):
    job = service.find_job(job_id)
    if job is None:
        return jsonify(error={"code": "not_found", "message": f"no job {job_id}"}), 404
    return jsonify(job_view(job))


@admin_required
def api_reindex():
    protect()
    body = json_body(ReindexBody, empty={})
    try:
        job_id = service.start_reindex(full=body.full, retry_failed=body.retry_failed, user=current_identity().user_id)
    except service.ReindexBusy as exc:
        return jsonify(error={"code": "busy", "message": str(exc), "job_id": exc.job_id}), 409
    except ValueError as exc:
        return jsonify(error={"code": "nothing_to_retry", "message": str(exc)}), 400
    return jsonify(job_id=job_id, url=url_for("historian.api_job", job_id=job_id)), 202


# The pages and endpoints of this module: (rule, view, methods), added to the blueprint by build_blueprint.
ROUTES = (
    ("/admin/reindex", admin_reindex, ["GET"]),
    ("/admin/reindex", admin_reindex_start, ["POST"]),
    ("/api/jobs", api_jobs, ["GET"]),
    ("/api/jobs/<job_id>", api_job, ["GET"]),
    ("/api/reindex", api_reindex, ["POST"]),
)

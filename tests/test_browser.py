"""Headless Chromium against the demo host: log in, ask with live progress, follow a citation, follow up, reindex.

Needs Debian's ``chromium`` and ``chromium-driver`` (``./dev test`` installs them when it can). Screenshots
go to ``HISTORIAN_TEST_SCREENSHOTS`` (the README's come from there) or the test's temporary folder.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
DRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
pytestmark = pytest.mark.skipif(
    bool(os.environ.get("HISTORIAN_TEST_SKIP_BROWSER")),
    reason="HISTORIAN_TEST_SKIP_BROWSER is set (without it a missing chromium fails these tests: "
           "./dev test installs it)",
)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The demo host on a small slice of the sample corpus, indexed, served on 127.0.0.1."""
    from werkzeug.serving import make_server

    from historian_blueprint import get_store
    from historian_blueprint.demo import create_app
    from tests.test_graph import corpus_docs
    from tests.test_index import run_reindex

    os.environ["HISTORIAN_DEMO_USERS"] = "alice:alice-pw:researcher,root:root-pw:admin"
    try:
        app = create_app({"DEMO_HOME": str(tmp_path_factory.mktemp("browser")), "DEMO_LOAD_CORPUS": False})
    finally:
        os.environ.pop("HISTORIAN_DEMO_USERS", None)
    from tests.test_map import map_docs

    docs = corpus_docs() + map_docs()  # the map's corpus: three topics with planted conflicts
    docs.append({"_id": "evil-doc", "title": "A <script>alert('doc')</script> pamphlet", "date": "1893-01-01",
                 "content": "The panic of 1893 <script>alert('doc')</script> closed many banks in the West."})
    with app.app_context():
        get_store().documents.insert_many(docs)
    assert run_reindex(app)["state"] == "succeeded"
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield app, f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    folder = Path(os.environ.get("HISTORIAN_TEST_SCREENSHOTS") or tmp_path_factory.mktemp("screens"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def browser():
    assert os.path.exists(CHROMIUM) and os.path.exists(DRIVER), ("install Debian's chromium and chromium-driver "
                                                                 "(./dev test does)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run", "--window-size=1200,1400"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})  # CSP violations land in the console
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


def wait_for(condition, timeout=90, every=0.05):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(every)
    raise AssertionError("timed out waiting")


def csp_violations(driver) -> list[str]:
    return [e["message"] for e in driver.get_log("browser") if "Content Security Policy" in e["message"]]


def log_in(driver, base, name, password):
    from selenium.webdriver.common.by import By

    driver.get(f"{base}/login")
    driver.find_element(By.NAME, "username").send_keys(name)
    driver.find_element(By.NAME, "password").send_keys(password)
    driver.find_element(By.CSS_SELECTOR, "form button, form [type=submit]").click()
    wait_for(lambda: "/login" not in driver.current_url)


def test_ask_follow_a_citation_and_follow_up(site, browser, shots):
    from selenium.webdriver.common.by import By

    app, base = site
    log_in(browser, base, "alice", "alice-pw")
    browser.get(f"{base}/historian/ask")
    browser.find_element(By.ID, "h-question").send_keys("List three causes of the depression <script>alert(1)</script>")
    browser.save_screenshot(str(shots / "ask.png"))
    browser.find_element(By.CSS_SELECTOR, "#h-ask button[type=submit]").click()
    # progress events arrive before the answer
    first_step = wait_for(lambda: [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#h-progress li")
                                   if " ms)" in li.text])
    assert not browser.find_elements(By.CSS_SELECTOR, "#h-result .h-answer") or len(first_step) >= 1
    wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, "#h-result .h-answer"))
    steps = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#h-progress li")]
    assert any(s.startswith("retrieve") for s in steps) and steps[-1].startswith("answer ready")
    assert "/historian/runs/" in browser.current_url  # the answer has its permalink without a reload
    heading = browser.find_element(By.CSS_SELECTOR, "#h-result h2").text
    assert "<script>alert(1)</script>" in heading  # shown as text, not run
    browser.save_screenshot(str(shots / "answer.png"))
    report = browser.find_element(By.CSS_SELECTOR, '[data-testid="report-judge"]')
    report.find_element(By.TAG_NAME, "summary").click()
    browser.execute_script("arguments[0].scrollIntoView()", report)
    browser.save_screenshot(str(shots / "report.png"))
    quote = browser.find_element(By.CSS_SELECTOR, "#h-cite-1 blockquote").text
    browser.find_element(By.CSS_SELECTOR, '[data-testid="cite-1"]').click()
    mark = wait_for(lambda: browser.find_elements(By.ID, "h-mark-first"))[0]
    assert " ".join(mark.text.split()) == " ".join(quote.split())
    in_view = browser.execute_script(
        "const r = arguments[0].getBoundingClientRect(); return r.top >= 0 && r.bottom <= window.innerHeight;", mark)
    assert in_view
    browser.save_screenshot(str(shots / "source.png"))
    # the run is in the history; a follow-up joins its thread
    browser.get(f"{base}/historian/runs")
    rows = browser.find_elements(By.CSS_SELECTOR, '[data-testid="run-row"]')
    assert rows and "causes of the depression" in rows[0].text
    rows[0].find_element(By.TAG_NAME, "a").click()
    wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, '[data-testid="follow-up"]'))[0].click()
    wait_for(lambda: browser.find_elements(By.ID, "h-question"))[0].send_keys(
        "What did Hoover propose about the banks?")
    browser.find_element(By.CSS_SELECTOR, "#h-ask button[type=submit]").click()
    wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, "#h-result .h-answer"))
    browser.get(browser.current_url)  # the permalink of the follow-up shows the thread
    thread = browser.find_element(By.CSS_SELECTOR, ".h-thread").text
    assert "causes of the depression" in thread and "propose about the banks" in thread
    assert csp_violations(browser) == []


def test_admin_sees_the_reindex_progress_bar_advance(site, browser, shots, monkeypatch):
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.expected_conditions import staleness_of
    from selenium.webdriver.support.ui import WebDriverWait

    from historian_blueprint.index import embedding

    app, base = site
    for model in list(embedding._CACHE.values()):  # the small corpus encodes in a blink: slow it to watch the bar move
        encode = model.encode

        def slowly(texts, *args, _encode=encode, **kwargs):
            time.sleep(1.5)
            return _encode(texts, *args, **kwargs)

        monkeypatch.setattr(model, "encode", slowly)
    log_in(browser, base, "root", "root-pw")
    browser.get(f"{base}/historian/admin/reindex")
    browser.find_element(By.NAME, "full").click()  # re-embed everything: long enough to watch
    before = browser.find_element(By.TAG_NAME, "html")
    browser.find_element(By.CSS_SELECTOR, "form.h-actions button[type=submit]").click()
    # the page before the submit shows the fixture's finished build (succeeded, 100%): watch only the page it leads to
    WebDriverWait(browser, 30).until(staleness_of(before))
    seen: list[float] = []

    def finished() -> bool:
        try:
            return watch()
        except (StaleElementReferenceException, NoSuchElementException):  # the page reloads when the job ends
            return False

    def watch() -> bool:
        # the state and the bar in one read of one page: one update sets both, so a finished state comes with its
        # final bar (two reads could fall either side of the reload that follows the end, and mix two pages)
        state, value = browser.execute_script(
            "var s = document.getElementById('h-state'), p = document.getElementById('h-progress');"
            "return s && p ? [s.textContent, String(p.value)] : ['', null];")
        done = "succeeded" in state
        if value not in (None, "") and (not seen or float(value) != seen[-1]):
            seen.append(float(value))
        if len(seen) == 2:
            browser.save_screenshot(str(shots / "admin.png"))
        return done

    wait_for(finished, timeout=300, every=0.1)
    assert any(0 < v < 100 for v in seen) and seen[-1] == 100, seen  # it moved while we watched, then completed
    assert seen == sorted(seen)


def test_map_a_topic_watch_progress_see_the_graph_and_open_a_conflict_side(site, browser, shots):
    from selenium.webdriver.common.by import By

    app, base = site
    log_in(browser, base, "alice", "alice-pw")
    browser.get(f"{base}/historian/map")
    browser.find_element(By.ID, "h-topic").send_keys("the Johnstown Flood")
    browser.find_element(By.CSS_SELECTOR, "#h-map button[type=submit]").click()
    steps = wait_for(lambda: [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#h-progress li")
                              if " ms)" in li.text])
    assert steps[0].startswith("scout")
    wait_for(lambda: "/historian/maps/" in browser.current_url)
    graph = browser.find_element(By.ID, "h-graph")
    wait_for(lambda: int(graph.get_attribute("data-nodes") or 0) > 0)
    assert int(graph.get_attribute("data-edges")) > 0
    assert browser.execute_script("return window.historianMap.nodes('[type = \"conflict\"]').length") >= 1
    time.sleep(0.3)  # the layout settles
    browser.save_screenshot(str(shots / "map.png"))
    # a conflict side in the battleground opens its source with the cited span highlighted
    side = browser.find_elements(By.CSS_SELECTOR, '[data-testid="conflict-side"] a[data-testid="map-citation"]')[0]
    cited = side.get_attribute("title")
    browser.execute_script("arguments[0].scrollIntoView()", side)
    side.click()
    mark = wait_for(lambda: browser.find_elements(By.ID, "h-mark-first"))[0]
    assert " ".join(mark.text.split()) == " ".join(cited.split())
    browser.save_screenshot(str(shots / "map_source.png"))
    # an edge of the graph does the same (a tap on a conflict edge)
    browser.back()
    wait_for(lambda: int(browser.find_element(By.ID, "h-graph").get_attribute("data-nodes") or 0) > 0)
    href = browser.execute_script(
        "const e = window.historianMap.edges('[kind = \"conflict\"]')[0]; const h = e.data('href'); "
        "e.emit('tap'); return h;")
    wait_for(lambda: "/historian/sources/" in browser.current_url)
    assert browser.find_elements(By.ID, "h-mark-first") and href.split("#")[0] in browser.current_url
    assert csp_violations(browser) == []  # the pages, the live progress and the graph work under the CSP


def test_check_a_draft_shows_supported_not_confirmed_and_contradicted_apart(site, browser, shots):
    from selenium.webdriver.common.by import By

    from tests.test_outcomes_web import DRAFT, SHOWN

    app, base = site
    log_in(browser, base, "alice", "alice-pw")
    browser.get(f"{base}/historian/verify")
    browser.find_element(By.ID, "h-text").send_keys(DRAFT)
    browser.find_element(By.XPATH, "//textarea[@id='h-text']/ancestor::form//button[@type='submit']").click()
    rows = wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, 'tr[data-testid="claim"]'))
    labels = [r.find_element(By.CSS_SELECTOR, '[data-testid="outcome"]') for r in rows]
    assert [(r.get_attribute("class"), label.text, r.find_element(By.CSS_SELECTOR, ".h-span-label").text)
            for r, label in zip(rows, labels)] == [(f"h-outcome-{group}", text, span) for group, text, span in SHOWN]
    colours = [label.value_of_css_property("color") for label in labels]
    assert len(set(colours)) == 3 and colours[1] == "rgba(164, 0, 0, 1)"  # the contradiction red, the unconfirmed not
    quotes = [r.find_element(By.CSS_SELECTOR, '[data-testid="evidence-span"]').text for r in rows]
    assert all(quotes) and "$9,000,000,000" in quotes[1]  # each row shows the span its decision read
    browser.execute_script("arguments[0].scrollIntoView()", rows[0])
    browser.save_screenshot(str(shots / "outcomes.png"))
    # the contradiction's span opens in its source, highlighted
    rows[1].find_element(By.CSS_SELECTOR, '[data-testid="evidence"] a').click()
    mark = wait_for(lambda: browser.find_elements(By.ID, "h-mark-first"))[0]
    assert " ".join(mark.text.split()) == " ".join(quotes[1].split())
    assert csp_violations(browser) == []


def asked_on_a_desktop(driver, base, user, question) -> str:
    """Log in at 1400x1000, ask through the form, wait for the answer; its page's URL."""
    from selenium.webdriver.common.by import By

    _viewport(driver, 1400, 1000)
    log_in(driver, base, *user)
    driver.get(f"{base}/historian/ask")
    driver.find_element(By.ID, "h-question").send_keys(question)
    driver.find_element(By.CSS_SELECTOR, "#h-ask button[type=submit]").click()
    wait_for(lambda: driver.find_elements(By.CSS_SELECTOR, "#h-result .h-answer"))
    return driver.current_url


def _viewport(driver, width, height, mobile=False):
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile})


def _no_horizontal_scroll(driver) -> bool:
    return driver.execute_script("return document.documentElement.scrollWidth <= window.innerWidth + 1;")


def test_the_answer_page_reads_as_prose_on_a_desktop_and_a_phone(site, browser, shots):
    """Desktop 1400x1000 and phone 390x844: the answer's standing in plain words, findings grouped by source,
    the reports as paragraphs (their data folded away), a citation opening with its span's top between 25% and
    60% of the window, and no horizontal scroll on the phone (answer, source, ask, history, map pages)."""
    from selenium.webdriver.common.by import By

    app, base = site
    answer_url = asked_on_a_desktop(browser, base, ("alice", "alice-pw"),
                                    "What did Hoover say about the banks and the depression?")
    words = browser.find_element(By.CSS_SELECTOR, '[data-testid="status-sentence"]').text
    assert words and "_" not in words and "p(supported)" not in browser.page_source
    groups = browser.find_elements(By.CSS_SELECTOR, '[data-testid="source-group"]')
    assert groups and all(g.find_element(By.TAG_NAME, "h4").text for g in groups)
    quotes = [q.text for q in browser.find_elements(By.CSS_SELECTOR, ".h-source-group blockquote")]
    assert len(quotes) == len(set(quotes))  # each passage quoted once under its source
    judge = browser.find_element(By.CSS_SELECTOR, '[data-testid="report-judge"]')
    assert judge.find_element(By.TAG_NAME, "p").text.startswith("The judge weighed the three reports")
    # the raw report is one click away, not on the page
    assert not judge.find_element(By.TAG_NAME, "pre").is_displayed()
    lead = browser.find_element(By.CSS_SELECTOR, '[data-testid="answer"]').text
    assert "answers most directly" in lead and "[1]" in lead  # a lead sentence in Historian's words
    assert not any(q in lead for q in quotes)  # it quotes an excerpt, never a finding whole
    panel = browser.find_element(By.CSS_SELECTOR, '[data-testid="context-panel"]')  # beside the findings, in view
    findings = browser.find_element(By.CSS_SELECTOR, ".h-findings")
    assert panel.is_displayed() and panel.rect["x"] >= findings.rect["x"] + findings.rect["width"]
    assert " ".join(panel.find_element(By.TAG_NAME, "mark").text.split()) == " ".join(quotes[0].split())
    contexts = browser.find_elements(By.CSS_SELECTOR, '[data-testid="finding"] [data-testid="context"]')
    assert contexts, "no finding has sentences around it"
    chosen = contexts[-1].find_element(By.XPATH, "ancestor::li")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'});", chosen)
    contexts[-1].find_element(By.TAG_NAME, "summary").click()
    wanted = " ".join(chosen.find_element(By.TAG_NAME, "blockquote").text.split())
    wait_for(lambda: " ".join(panel.find_element(By.TAG_NAME, "mark").text.split()) == wanted)
    assert contexts[-1].get_attribute("open") is None  # read beside the answer, not unfolded in place
    number = chosen.get_attribute("value")
    assert panel.find_element(By.CSS_SELECTOR, '[data-panel="n"]').text == f"[{number}]"
    top = browser.execute_script("return arguments[0].getBoundingClientRect().top;", panel)
    assert 0 <= top < 1000 and panel.find_element(By.CSS_SELECTOR, '[data-panel="link"]').get_attribute("href")
    browser.save_screenshot(str(shots / "answer-desktop.png"))
    browser.get(f"{base}/historian/ask")
    browser.find_element(By.ID, "h-question").send_keys("Compare what Cleveland and Hoover said about the banks.")
    browser.find_element(By.CSS_SELECTOR, "#h-ask button[type=submit]").click()
    table = wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, '#h-result [data-testid="comparison"]'))[0]
    sides = table.find_elements(By.CSS_SELECTOR, '[data-testid="side"]')
    assert [s.get_attribute("data-label") for s in sides] == ["Cleveland", "Hoover"]
    for side in sides:  # a finding per side, or "not found for this side"
        assert side.find_elements(By.CSS_SELECTOR, ".h-marker") or "Not found for this side" in side.text
    compare_url = browser.current_url
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'});", table)
    browser.save_screenshot(str(shots / "compare-desktop.png"))
    browser.get(answer_url)
    browser.find_element(By.CSS_SELECTOR, '[data-testid="cite-1"]').click()
    mark = wait_for(lambda: browser.find_elements(By.ID, "h-mark-first"))[0]
    time.sleep(0.3)  # the load event's placement
    top = browser.execute_script("return arguments[0].getBoundingClientRect().top / window.innerHeight;", mark)
    assert 0.25 <= top <= 0.60, top
    assert browser.find_elements(By.CSS_SELECTOR, ".h-mark-n")  # every highlighted span shows its citation number
    browser.save_screenshot(str(shots / "source-desktop.png"))

    _viewport(browser, 390, 844, mobile=True)
    for name, url in (("answer", answer_url), ("ask", f"{base}/historian/ask"), ("history", f"{base}/historian/runs"),
                      ("map", f"{base}/historian/map")):
        browser.get(url)
        wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, "main"))
        assert _no_horizontal_scroll(browser), name
        if name == "answer":
            assert not browser.find_element(By.CSS_SELECTOR, '[data-testid="context-panel"]').is_displayed()
            context = browser.find_elements(By.CSS_SELECTOR, '[data-testid="context"]')[0]  # unfolds in place
            context.find_element(By.TAG_NAME, "summary").click()
            assert context.get_attribute("open") is not None and _no_horizontal_scroll(browser)
            browser.save_screenshot(str(shots / "answer-phone.png"))
    browser.get(compare_url)
    table = wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, '[data-testid="comparison"]'))[0]
    assert _no_horizontal_scroll(browser), "comparison"
    browser.execute_script("arguments[0].scrollIntoView({block: 'start'});", table)
    browser.save_screenshot(str(shots / "compare-phone.png"))
    browser.get(answer_url)
    browser.find_element(By.CSS_SELECTOR, '[data-testid="cite-1"]').click()
    mark = wait_for(lambda: browser.find_elements(By.ID, "h-mark-first"))[0]
    time.sleep(0.3)
    top = browser.execute_script("return arguments[0].getBoundingClientRect().top / window.innerHeight;", mark)
    assert 0.25 <= top <= 0.60 and _no_horizontal_scroll(browser), top
    logout = browser.find_element(By.XPATH, "//button[normalize-space()='Log out']")
    right = browser.execute_script("return arguments[0].getBoundingClientRect().right <= window.innerWidth;", logout)
    assert right  # the nav wraps: "Log out" stays on screen
    browser.save_screenshot(str(shots / "source-phone.png"))
    assert csp_violations(browser) == []


# Each visible word (two letters or more) of the page whose letters the layout put on more than one line: a word
# broken inside ("Typ e", "chec k"). Text in a closed <details>, a hidden element or an off-screen graph is not laid
# out and is passed over.
BROKEN_WORDS = """
const out = [];
const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
for (let node = walker.nextNode(); node; node = walker.nextNode()) {
  const el = node.parentElement;
  if (!el || !el.getClientRects().length || el.closest('script, style, svg, canvas')) continue;
  const re = /[A-Za-z\\u00C0-\\u024F]{2,}/g;
  for (let m = re.exec(node.textContent); m; m = re.exec(node.textContent)) {
    const range = document.createRange();
    range.setStart(node, m.index);
    range.setEnd(node, m.index + m[0].length);
    const lines = new Set(Array.from(range.getClientRects()).filter(r => r.width > 0).map(r => Math.round(r.bottom)));
    if (lines.size > 1) out.push(m[0] + ' in <' + el.tagName.toLowerCase() + ' class="' + el.className + '">');
  }
}
return out;
"""


def test_no_word_is_broken_inside_on_any_page_on_a_desktop_or_a_phone(site, browser):
    """1400x1000 and 390x844: the pages a researcher and an admin use (ask, an answer, its source, the history, a
    checked draft, the map form and a map, the admin page, the host's reader) break lines between words only."""
    from selenium.webdriver.common.by import By

    from tests.test_outcomes_web import DRAFT

    app, base = site
    answer_url = asked_on_a_desktop(browser, base, ("root", "root-pw"),
                                    "What did Cleveland say about the tariff and the surplus?")
    source_url = browser.find_element(By.CSS_SELECTOR, '[data-testid="cite-1"]').get_attribute("href")
    browser.get(f"{base}/historian/verify")
    browser.find_element(By.ID, "h-text").send_keys(DRAFT)
    browser.find_element(By.XPATH, "//textarea[@id='h-text']/ancestor::form//button[@type='submit']").click()
    wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, 'tr[data-testid="claim"]'))
    verify_url = browser.current_url
    browser.get(f"{base}/historian/map")
    browser.find_element(By.ID, "h-topic").send_keys("the Triangle fire")
    browser.find_element(By.CSS_SELECTOR, "#h-map button[type=submit]").click()
    wait_for(lambda: "/historian/maps/" in browser.current_url)
    map_url = browser.current_url
    pages = {"ask": f"{base}/historian/ask", "answer": answer_url, "source": source_url,
             "history": f"{base}/historian/runs", "map form": f"{base}/historian/map", "map": map_url,
             "maps": f"{base}/historian/maps", "admin": f"{base}/historian/admin/reindex", "reader": f"{base}/"}
    broken = {}
    for width, height, mobile in ((1400, 1000, False), (390, 844, True)):
        _viewport(browser, width, height, mobile)
        for name, url in pages.items():
            browser.get(url)
            wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, "main, body"))
            found = browser.execute_script(BROKEN_WORDS)
            if found:
                broken[f"{name} at {width}"] = found[:5]
        browser.get(f"{base}/historian/verify")  # a checked draft is a POST's page: check it again at this width
        browser.find_element(By.ID, "h-text").send_keys(DRAFT)
        browser.find_element(By.XPATH, "//textarea[@id='h-text']/ancestor::form//button[@type='submit']").click()
        wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, 'tr[data-testid="claim"]'))
        if found := browser.execute_script(BROKEN_WORDS):
            broken[f"checked draft at {width}"] = found[:5]
    assert verify_url and not broken, broken

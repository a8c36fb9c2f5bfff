"""AppTest: the Public information page — a tiny seeded study drawn with the engine's numbers, a bad upload that
keeps the session, and the public-information block of the decision record through export and import."""

from __future__ import annotations

import base64
import json

import numpy as np
import plotly.io as pio
import pytest

from engine.public_info.count_table import counties_demo
from engine.public_info.results import CountStudyConfig, build_count_study
from engine.rng import make_rng
from tests.app.conftest import assert_clean, open_page, shown, start_on, studio


def tiny_study(at, seed: str = "7"):
    at.text_input(key="public_info.seed").input(seed).run()
    at.text_input(key="public_info.epsilons").input("0.5, 2").run()
    at.number_input(key="public_info.replicates").set_value(3).run()
    at.multiselect(key="public_info.methods").set_value(["postprocess", "wasserstein-naive"]).run()
    at.button(key="public_info.run").click().run()
    assert_clean(at)
    return at


def values(v) -> np.ndarray:
    """Plotly's JSON packs numeric arrays as {"dtype", "bdata"(, "shape")}; unpack them (or take a plain list)."""
    if isinstance(v, dict):
        out = np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"]))
        return out.reshape([int(x) for x in str(v["shape"]).split(",")]) if "shape" in v else out
    return np.asarray(v)


def figure(at, title_part: str):
    """The drawn plotly figure whose title contains ``title_part`` (rebuilt from the chart's JSON)."""
    for c in at.get("plotly_chart"):
        fig = pio.from_json(c.proto.spec)
        if title_part in (fig.layout.title.text or ""):
            return fig
    raise AssertionError(f"no chart titled {title_part!r}")


@pytest.mark.slow
def test_tiny_study_figures_carry_the_engines_numbers():
    at = tiny_study(start_on("public_info"))
    results, seed = studio(at).public_info_work.results
    assert seed == 7
    cfg = CountStudyConfig.from_dict(studio(at).public_info["study"])
    assert cfg.epsilons == (0.5, 2.0) and cfg.replicates == 3
    engine = build_count_study(counties_demo(), cfg, rng=make_rng(7))
    assert results.regions == engine.regions and len(results.cells) == len(engine.cells) == 4
    for mine, ref in zip(results.cells, engine.cells, strict=True):
        assert (mine.method, mine.epsilon) == (ref.method, ref.epsilon)
        np.testing.assert_array_equal(mine.released, ref.released)
        np.testing.assert_array_equal(mine.relative_error, ref.relative_error)
        assert mine.contraction == ref.contraction
    # Figure 1 of the first highlighted region at the shown ε: box values = the engine's released counts
    region = engine.regions[0]
    fig1 = figure(at, f"{region}: release")
    eps = min(cfg.epsilons)
    boxes = [t for t in fig1.data if t.type == "box"]
    for box, cell in zip(boxes, [c for c in engine.cells if c.epsilon == eps], strict=True):
        assert box.name == cell.label
        np.testing.assert_array_equal(values(box.y).astype(float), cell.released[:, 0, :].ravel())
    truth = next(t for t in fig1.data if t.name.startswith("truth"))
    np.testing.assert_array_equal(values(truth.y), engine.truth[0])
    assert "Made under: ε-TP with ε = 0.5" in fig1.layout.title.text
    assert "ε = 2 " not in fig1.layout.title.text  # only the guarantee of the ε shown
    assert "simulation — not private" in fig1.layout.title.text
    # Figure 2 medians and Figure 3 frequencies
    fig2 = figure(at, "Relative error")
    medians = [m for t in fig2.data for m in values(t.median)]
    expect = [float(np.quantile(c.relative_error, 0.5)) for c in engine.cells]
    np.testing.assert_allclose(sorted(medians), sorted(expect), rtol=1e-12)
    fig3 = figure(at, "contracts")
    assert values(fig3.data[0].y).tolist() == [engine.cells[0].contraction[r]["CaseZeros"] for r in engine.regions]
    assert any("Simulation — not private" in w.value for w in at.warning)


def test_bad_upload_shows_the_message_and_keeps_the_session():
    at = start_on("public_info")
    at.text_input(key="public_info.seed").input("3").run()
    before = dict(studio(at).public_info)
    studio(at).public_info_work.upload = ("bad.csv", b"region,period,count\na,1,5\na,1,6\nb,1,7\n")
    at.radio(key="public_info.source").set_value("upload").run()
    assert_clean(at)
    errors = [e.value for e in at.error]
    assert any("has period '1' twice" in e for e in errors), errors
    assert studio(at).public_info == before  # nothing lost
    at.radio(key="public_info.source").set_value("demo").run()
    assert_clean(at)
    assert not at.error


def test_good_upload_with_column_pickers():
    at = start_on("public_info")
    frame = counties_demo(regions=5, periods=3).to_frame().rename(columns={"subcount": "deaths"})
    studio(at).public_info_work.upload = ("mine.csv", frame.to_csv(index=False).encode())
    at.radio(key="public_info.source").set_value("upload").run()
    assert_clean(at)
    at.selectbox(key="public_info.col_sub-count").set_value("deaths").run()
    assert_clean(at)
    assert any("5 regions × 3 periods" in s.value for s in at.success)
    assert studio(at).public_info["data"].startswith("upload:")


@pytest.mark.slow
def test_export_then_import_round_trips_the_public_information_block():
    from engine.decision_record import load_decision_record
    from tests.app.test_export_page import record_text

    at = start_on("public_info")
    at.text_input(key="public_info.epsilons").input("0.25, 3").run()
    at.number_input(key="public_info.replicates").set_value(4).run()
    at.checkbox(key="public_info.public_last-period").uncheck().run()
    at.multiselect(key="public_info.methods").set_value(["postprocess", "wasserstein-naive"]).run()
    at.text_input(key="public_info.seed").input("5").run()
    at.radio(key="public_info.model").set_value("correlated").run()
    at.slider(key="public_info.z").set_value((0.1, 0.9)).run()
    assert_clean(at)
    open_page(at, "export")
    text = record_text(at)
    block = load_decision_record(text).public_information
    assert block["scope"] == "DP / ε-TP subject to the invariants Z"
    assert block["epsilon_per_period"] == [0.25, 3.0] and list(block["public"]) == ["total", "subcount"]
    assert block["dependence_model"] == {"kind": "correlated", "n": 20, "z0": 0.1, "z1": 0.9}
    assert block["epsilon_total"][1] == {"per_period": 3.0, "parallel": 3.0, "sequential": 72.0}
    assert any("Public information (count-table study)" in m.value for m in at.markdown)
    # the commands that make the recorded releases: one per (method, ε), each the engine's for that configuration
    from engine.public_info.count_release import CountReleaseConfig

    commands = [c.value for c in at.code if "engine counts" in c.value]
    assert commands == [CountReleaseConfig.from_dict(c).cli_command() for c in block["releases"]]
    assert len(commands) == 4 and not any("--replicates" in c or "--seed" in c for c in commands)

    fresh = start_on("export")
    fresh.file_uploader(key="export.import").set_value(("decision-record.json", text.encode(), "application/json")).run()
    assert_clean(fresh)
    assert studio(fresh).public_info["study"] == block["study"]
    open_page(fresh, "public_info")
    assert fresh.text_input(key="public_info.epsilons").value == "0.25, 3"
    assert fresh.number_input(key="public_info.replicates").value == 4
    assert fresh.checkbox(key="public_info.public_last-period").value is False
    assert fresh.multiselect(key="public_info.methods").value == ["postprocess", "wasserstein-naive"]
    assert fresh.text_input(key="public_info.seed").value == "5"
    assert fresh.slider(key="public_info.z").value == (0.1, 0.9)
    open_page(fresh, "export")
    again = load_decision_record(record_text(fresh)).public_information
    assert again == block


def test_inference_panel_shows_the_engines_posterior_and_risks():
    from engine.public_info.inference import KAnonymityDemo, power_comparison, two_cell_bayes_risk

    at = start_on("public_info")
    table = next(d for d in at.dataframe if "quantity" in d.value.columns).value.set_index("quantity")["value"]
    assert table["posterior mean E[θ | y, Z]: exact"] == KAnonymityDemo().exact_posterior_mean(5)  # O10: 0.27848
    assert round(table["posterior mean E[θ | y, Z]: exact"], 5) == 0.27848
    assert abs(table["Algorithm 1 (rejection, global bound)"] - 0.27848) < 0.02  # seeded (0), 2000 draws: Monte Carlo se ≈ 0.002
    risk = two_cell_bayes_risk(30, 0.3, 0.5)
    assert table["Bayes risk E[Var | Y, Z] (two cells, public total)"] == risk["y_and_z"]
    assert table["Bayes risk E[Var | Y*] (projected)"] == risk["projected"] > risk["y_and_z"]
    power = power_comparison(30, 0.3, 0.7, epsilon=0.5)
    assert table["power, Laplace noise: raw"] == power["raw"] and table["power, Laplace noise: clipped"] == power["clipped"]


def correlated(at, n: int = 100, z: tuple[float, float] = (0.0, 0.5)):
    at.radio(key="public_info.model").set_value("correlated").run()
    at.number_input(key="public_info.n").set_value(n)
    at.slider(key="public_info.z").set_value(z).run()
    assert_clean(at)
    return at


def test_correlated_model_sets_the_releases_delta_z_and_its_noise_scale():
    """O3 (n = 100, z0 = 0, z1 = 0.5): k = 100 per count; with the total public every case the group gains another
    region loses (2n = 200 per count), doubled for counties-demo's sub-count: Δ_z = 400. The release runs with it
    (noise DL(ε/Δ_z), scale Δ_z/ε) and every caption says which Δ_z was used and why."""
    from engine.public_info.dependence import DependenceModel

    at = correlated(start_on("public_info"))
    model = DependenceModel("correlated", n=100, z0=0.0, z1=0.5)
    cfg = CountStudyConfig.from_dict(studio(at).public_info["study"])
    assert cfg.dependence == model and cfg.sensitivity is None  # derived, not typed
    assert cfg.release_config("postprocess", 1.0).delta_z(subcounts=True).value == 400.0 == 4 * model.count_sensitivity
    assert next(m for m in at.metric if m.label == "Δ_z derived for the release").value == "400"
    noise = next(d for d in at.dataframe if "noise DL(a): a" in d.value.columns).value
    eps = cfg.epsilons[0]
    assert noise["noise DL(a): a"].tolist() == [cfg.release_config(m, eps).noise_rate(subcounts=True)
                                                for m in cfg.methods]
    assert 1 / cfg.release_config("postprocess", eps).noise_rate(subcounts=True) == pytest.approx(400 / eps)
    assert any("The release uses Δ_z = 400: 200 per count because the current total is public" in m.value
               for m in at.markdown)
    at.text_input(key="public_info.seed").input("7")
    at.text_input(key="public_info.epsilons").input("0.5")
    at.number_input(key="public_info.replicates").set_value(2)
    at.multiselect(key="public_info.methods").set_value(["postprocess"]).run()
    at.button(key="public_info.run").click().run()
    assert_clean(at)
    results, _ = studio(at).public_info_work.results
    ref = build_count_study(counties_demo(), CountStudyConfig.from_dict(studio(at).public_info["study"]),
                            rng=make_rng(7))
    np.testing.assert_array_equal(results.cells[0].released, ref.cells[0].released)
    assert results.cells[0].guarantee.sensitivity == 400.0
    assert "Δ_z = 400: 200 per count because the current total is public" in figure(at, "Relative error").layout.title.text


def test_delta_z_follows_what_is_public_and_a_smaller_one_is_refused():
    """Independent people (G15): 4 for counties-demo's count + sub-count with the total public, 2 without it; a
    Δ_z typed below the derived one is refused with the reason, and the page keeps running."""
    at = start_on("public_info")
    metric = lambda: next(m for m in at.metric if m.label == "Δ_z derived for the release").value  # noqa: E731
    assert metric() == "4"
    assert any("2 per count because the current total is public" in c.value for c in at.caption)
    at.checkbox(key="public_info.public_total").uncheck().run()
    assert metric() == "2" and not at.exception
    at.checkbox(key="public_info.public_total").check().run()
    at.number_input(key="public_info.sensitivity").set_value(2.0).run()
    assert not at.exception
    errors = " ".join(e.value for e in at.error).replace("\\", "")  # Markdown escapes
    assert "sensitivity Δ_z = 2 is below the 4 this release needs" in errors
    assert not any(b.key == "public_info.run" for b in at.button)  # nothing runs under a false guarantee
    at.number_input(key="public_info.sensitivity").set_value(8.0).run()
    assert not at.error and any("Δ_z = 8, set by the user above the derived 4" in m.value for m in at.markdown)


def test_ignoring_the_dependence_panel_shows_the_engines_realised_epsilon():
    """O6 (n = 20, z0 = 0.3, z1 = 0.7, ε = 1): Δ_z = 9 keeps ε (0.4854); the DP sensitivity 1 gives 4.3046."""
    from engine.public_info.dependence import DependenceModel, dependence_audit

    at = start_on("public_info")
    at.text_input(key="public_info.epsilons").input("1")
    correlated(at, 20, (0.3, 0.7))
    audit = dependence_audit(DependenceModel("correlated", n=20, z0=0.3, z1=0.7), 1.0)
    table = next(d for d in at.dataframe if "realised ε" in d.value.columns).value
    assert table["realised ε"].tolist() == [audit.calibrated.realised_epsilon, audit.ignoring.realised_epsilon]
    assert round(table["realised ε"][1], 4) == 4.3046 and table["claim holds"].tolist() == [True, False]
    assert table["calibrated to"][0] == "the model's Δ_z = 9"
    assert any("really ε = 4.305-TP, not ε = 1" in e.value for e in at.error)


def test_calculators_show_delta_z_and_the_papers_eq16_error():
    from engine.public_info.sensitivity import binary_sdl_sensitivity, gaussian_sensitivity_report
    from ui.figures.theme import fmt

    at = start_on("public_info")
    at.selectbox(key="public_info.calc_z").set_value("first-minus-rest").run()
    assert_clean(at)
    r = gaussian_sensitivity_report(1.0, 100, "first-minus-rest", 0.04, sigma_max=2.0, z_offset=1.0)  # O4: 0.5074874
    assert next(m for m in at.metric if m.label.startswith("Δ_z = Δ")).value == fmt(r.delta_z, 6) == "0.507487"
    assert any(f"The paper's Eq. 16 gives {fmt(r.paper_eq16, 6)}; the correct value is 0.507487" in w.value
               for w in at.warning)
    at.number_input(key="public_info.calc_offset").set_value(0.0).run()
    assert not any("Eq. 16 gives" in w.value for w in at.warning)
    at.radio(key="public_info.calc").set_value("binary").run()
    at.number_input(key="public_info.calc_bn").set_value(50).run()
    at.number_input(key="public_info.calc_k").set_value(5).run()  # k's range follows n: one run each
    assert_clean(at)
    assert next(m for m in at.metric if m.label == "Δ_z (Eq. 35)").value == str(binary_sdl_sensitivity(50, k=5)) == "1"


# ---- scenario links ------------------------------------------------------------------------------------------

def test_scenario_link_round_trips_the_pages_settings():
    from tests.app.test_tampered_links_and_records import open_link
    from ui.links import scenario_params

    at = start_on("public_info")
    at.text_input(key="public_info.epsilons").input("0.25, 3")
    at.checkbox(key="public_info.public_last-period").uncheck()
    at.multiselect(key="public_info.methods").set_value(["postprocess", "wasserstein-naive"])
    at.number_input(key="public_info.alpha").set_value(2.5)
    at.text_input(key="public_info.seed").input("5")
    correlated(at, 30, (0.1, 0.9))
    params = scenario_params(studio(at))
    assert "pinfo" in params
    fresh = open_page(open_link(params), "public_info")
    assert_clean(fresh)
    assert studio(fresh).public_info["study"] == studio(at).public_info["study"]
    assert studio(fresh).public_info["model"] == {"kind": "correlated", "n": 30, "z0": 0.1, "z1": 0.9}
    assert fresh.text_input(key="public_info.epsilons").value == "0.25, 3"
    assert fresh.checkbox(key="public_info.public_last-period").value is False
    assert fresh.multiselect(key="public_info.methods").value == ["postprocess", "wasserstein-naive"]
    assert fresh.number_input(key="public_info.alpha").value == 2.5
    assert fresh.text_input(key="public_info.seed").value == "5"
    assert fresh.radio(key="public_info.model").value == "correlated"
    assert fresh.number_input(key="public_info.n").value == 30 and fresh.slider(key="public_info.z").value == (0.1, 0.9)
    assert scenario_params(studio(fresh))["pinfo"] == params["pinfo"]


@pytest.mark.parametrize(("change", "shown"), [
    ({"epsilons": [0.5, 60.0]}, "ε per period = 60, outside the range this Studio accepts, [0.001, 50]"),
    ({"replicates": 5000}, "replicates = 5000, outside the range this Studio accepts, [1, 1000]"),
    ({"dependence": {"kind": "correlated", "n": 800, "z0": 0.1, "z1": 0.9}},
     "people per group n = 800, outside the range this Studio accepts, [2, 500]"),
    ({"methods": ["wasserstein-congenial"], "public": ["subcount"]}, "declare 'total' public"),
], ids=["epsilon", "replicates", "group-size", "base-needs-total"])
def test_a_link_with_public_info_settings_out_of_range_is_refused_not_clamped(change, shown):
    from tests.app.test_tampered_links_and_records import open_link, warnings

    study = {**CountStudyConfig(epsilons=(0.5,), replicates=3).to_dict(), **change}
    model = study.get("dependence", {"kind": "fixed"})
    link = {"data": "togo-demo", "pinfo": json.dumps({"source": "demo", "model": model, "seed": 3, "study": study})}
    at = open_link(link)
    assert_clean(at)
    assert "public-information settings could not be restored" in warnings(at) and shown in warnings(at)
    assert studio(at).public_info == {}  # nothing applied
    open_page(at, "public_info")
    assert_clean(at)
    assert at.number_input(key="public_info.replicates").value == 20  # the page's defaults


def test_epsilon_outside_the_studio_range_is_refused_on_the_page_as_in_links():
    at = start_on("public_info")
    at.text_input(key="public_info.epsilons").input("0.5, 100").run()
    assert_clean(at)
    assert any("ε per period = 100, outside the range this Studio accepts, [0.001, 50]" in shown(e.value)
               for e in at.error)
    assert 100.0 not in studio(at).public_info["study"]["epsilons"]  # so no link or record states it


def test_an_unrunnable_declaration_is_reported_full_width_and_export_says_it_shows_the_last_valid_one():
    """New-user review: unticking the total (which the congenial base needs) showed the engine's message under the
    ε field, and the Export page went on showing the earlier declaration without a word."""
    at = start_on("public_info")
    before = dict(studio(at).public_info)
    at.checkbox(key="public_info.public_total").uncheck().run()
    assert_clean(at)
    assert any(e.value.startswith("The release study cannot run as set: the Wasserstein mechanism with the congenial "
                                  "base") for e in at.error)
    assert studio(at).public_info == before  # the last valid declaration is kept
    open_page(at, "export")
    assert any("holds the last declaration that could" in w.value for w in at.warning)
    open_page(at, "public_info")
    at.checkbox(key="public_info.public_total").check().run()
    open_page(at, "export")
    assert not any("holds the last declaration that could" in w.value for w in at.warning)

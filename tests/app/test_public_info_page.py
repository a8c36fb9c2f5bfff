"""AppTest: the Public information page — a tiny seeded study drawn with the engine's numbers, a bad upload that
keeps the session, and the public-information block of the decision record through export and import."""

from __future__ import annotations

import base64

import numpy as np
import plotly.io as pio
import pytest

from engine.public_info.count_table import counties_demo
from engine.public_info.results import CountStudyConfig, build_count_study
from engine.rng import make_rng
from tests.app.conftest import assert_clean, open_page, start_app, studio


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
    at = tiny_study(open_page(start_app(), "public_info"))
    results, seed = at.session_state["public_info_results"]
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
    at = open_page(start_app(), "public_info")
    at.text_input(key="public_info.seed").input("3").run()
    before = dict(studio(at).public_info)
    at.session_state["public_info_upload"] = ("bad.csv", b"region,period,count\na,1,5\na,1,6\nb,1,7\n")
    at.radio(key="public_info.source").set_value("upload").run()
    assert_clean(at)
    errors = [e.value for e in at.error]
    assert any("has period '1' twice" in e for e in errors), errors
    assert studio(at).public_info == before  # nothing lost
    at.radio(key="public_info.source").set_value("demo").run()
    assert_clean(at)
    assert not at.error


def test_good_upload_with_column_pickers():
    at = open_page(start_app(), "public_info")
    frame = counties_demo(regions=5, periods=3).to_frame().rename(columns={"subcount": "deaths"})
    at.session_state["public_info_upload"] = ("mine.csv", frame.to_csv(index=False).encode())
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

    at = open_page(start_app(), "public_info")
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

    fresh = open_page(start_app(), "export")
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

    at = open_page(start_app(), "public_info")
    table = next(d for d in at.dataframe if "quantity" in d.value.columns).value.set_index("quantity")["value"]
    assert table["posterior mean E[θ | y, Z]: exact"] == KAnonymityDemo().exact_posterior_mean(5)  # O10: 0.27848
    assert round(table["posterior mean E[θ | y, Z]: exact"], 5) == 0.27848
    assert abs(table["Algorithm 1 (rejection, global bound)"] - 0.27848) < 0.02  # seeded (0), 2000 draws: Monte Carlo se ≈ 0.002
    risk = two_cell_bayes_risk(30, 0.3, 0.5)
    assert table["Bayes risk E[Var | Y, Z] (two cells, public total)"] == risk["y_and_z"]
    assert table["Bayes risk E[Var | Y*] (projected)"] == risk["projected"] > risk["y_and_z"]
    power = power_comparison(30, 0.3, 0.7, epsilon=0.5)
    assert table["power, Laplace noise: raw"] == power["raw"] and table["power, Laplace noise: clipped"] == power["clipped"]

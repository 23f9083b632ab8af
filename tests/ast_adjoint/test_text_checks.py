"""Numbers read back from text a value carrying a gradient was written into are refused, naming the line
(ast_adjoint/text_checks.py); text of constants, and text that is only printed, are not."""
import numpy as np
import pytest

from zygotepy import gradient
from zygotepy.errors import UnsupportedSyntax


def through_str(x):
    return float(str(x)) * x


def through_fstring(x):
    s = f"{x:.17g}"
    return float(s) + x


def through_percent(x):
    return np.float64("%r" % x) * x


def through_format_method(x):
    s = "{:.17g}".format(x)
    return float(s.strip()) * x


def through_comprehension(x):
    parts = [str(v) for v in [x, 2 * x]]
    return sum(float(p) for p in parts)


def through_branch(x, flag=True):
    if flag:
        s = repr(x)
    else:
        s = "1.0"
    return complex(s).real * x


@pytest.mark.parametrize("f", [through_str, through_fstring, through_percent, through_format_method,
                               through_comprehension, through_branch], ids=lambda f: f.__name__)
def test_round_trip_through_text_is_refused(f):
    with pytest.raises(UnsupportedSyntax, match="read back from text") as info:
        gradient(f, 1.25)
    assert "test_text_checks.py" in str(info.value)


def printing_and_constants(x):
    print(f"x = {x:.3f}")
    label = "w" + str(len([x]))
    return x * float("2.5") + float(label[1:]) + float(str(3.0))


def test_printing_and_text_of_constants_are_followed(capsys):
    assert gradient(printing_and_constants, 1.25) == (2.5,)
    assert "x = 1.250" in capsys.readouterr().out


def layers_by_name(ws, x):
    params = {}
    for i, w in enumerate(ws):
        params[f"layer{i}"] = w * x
    return float(params["layer0"]) + np.sum(np.asarray(params["layer1"]))


def key_read_back(x):
    d = {str(x): 1.0}
    d[str(2 * x)] = 2.0
    return float(list(d)[1]) * x


def test_text_as_a_key_is_no_text_in_the_values(mode):
    """`params[f"layer{i}"] = w * x` then `float(params["layer0"])` was refused as a number read back from text (the
    key's text was followed into the dict); a number read back from the keys themselves still is."""
    assert gradient(layers_by_name, [0.5, 1.2], 1.3) == ([pytest.approx(1.3), pytest.approx(1.3)], pytest.approx(1.7))
    with pytest.raises(UnsupportedSyntax, match="a number read back from text"):
        gradient(key_read_back, 0.7)


def grouped_by_text_key(x):
    d = {}
    for i, v in enumerate(x):
        k = f"k{i % 2}"
        d[k] = d.get(k, []) + [v]  # (a lookup by a text key: the list it finds is made of numbers)
    return np.sum(np.array(d["k0"])) * 2.0 + float(np.sum(np.asarray(d.get("k1"))))


def text_in_a_list_updated_in_place(x):
    parts = []
    parts.append(f"{x:.17g}")
    parts.append("0")
    return float(parts[0]) * x


def text_value_looked_up(x):
    d = {"a": repr(x)}
    return float(d.get("a", "1.0")) * x


def test_a_lookup_by_a_text_key_and_the_links_of_updates_carry_no_text(mode):
    """`d.get(k, [])` with a text key, and the links of the updates in place (`d[k] = ...` beside the loop's items),
    passed the key's text into the numbers `d` holds: `np.array(d["k0"])` was refused as a number read back from text.
    Text stored and updated in place, or looked up with `get`, is still followed."""
    x = np.array([0.5, -0.3, 0.8])
    assert np.allclose(gradient(grouped_by_text_key, x)[0], [2.0, 1.0, 2.0])
    for f in (text_in_a_list_updated_in_place, text_value_looked_up):
        with pytest.raises(UnsupportedSyntax, match="a number read back from text"):
            gradient(f, 0.7)


def text_stored_through_an_alias(x):
    box = {"t": "0"}
    tmp = box
    tmp["t"] = str(x)  # (the link gives `box` its new version: it holds text now)
    return float(box["t"]) * x


def test_text_stored_through_an_alias_is_followed(mode):
    with pytest.raises(UnsupportedSyntax, match="a number read back from text"):
        gradient(text_stored_through_an_alias, 0.7)

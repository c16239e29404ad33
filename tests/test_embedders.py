"""Embedders, cosine_matrix and medoid_index (hand-computed values)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from curiosity_tui.modelio.client import ModelClient, ModelConfigError
from curiosity_tui.modelio.embedders import (
    Embedder,
    EndpointEmbedder,
    TfidfEmbedder,
    cosine_matrix,
    medoid_index,
)
from curiosity_tui.offline.scripted_server import Script, ScriptedServer

C30, S30 = math.cos(math.pi / 6), math.sin(math.pi / 6)


def test_medoid_hand_computed():
    # a=(1,0), b=(cos30, sin30), c=(0,1): sums a=.866, b=.866+.5=1.366, c=.5 -> b
    v = np.array([[1.0, 0.0], [C30, S30], [0.0, 1.0]])
    assert medoid_index(v) == 1
    # scaling a row does not matter (cosine)
    assert medoid_index(v * np.array([[3.0], [0.1], [7.0]])) == 1


def test_medoid_ties_go_to_lowest_index():
    # an equilateral spread: all sums equal
    angles = [0.0, 2 * math.pi / 3, 4 * math.pi / 3]
    v = np.array([[math.cos(a), math.sin(a)] for a in angles])
    assert medoid_index(v) == 0
    # identical candidates 1 and 2, candidate 0 orthogonal: 1 and 2 tie, 1 wins
    v = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 0.0]])
    assert medoid_index(v) == 1
    assert medoid_index(np.array([[0.2, 0.3]])) == 0
    with pytest.raises(ValueError):
        medoid_index(np.zeros((0, 2)))


def test_cosine_matrix():
    a = np.array([[1.0, 0.0], [0.0, 2.0], [0.0, 0.0]])
    b = np.array([[C30, S30]])
    got = cosine_matrix(a, b)
    assert got.shape == (3, 1)
    assert got[:, 0] == pytest.approx([C30, S30, 0.0])
    with pytest.raises(ValueError, match="dimensions"):
        cosine_matrix(a, np.ones((1, 3)))


def test_tfidf_is_offline_deterministic_and_normalised():
    emb = TfidfEmbedder()
    assert isinstance(emb, Embedder)
    assert emb.name == "tfidf-char-wb-3-5@sklearn"
    texts = [
        "Did the printing press cause the Reformation?",
        "Did the printing press cause the Protestant Reformation?",
        "What was the price of grain in Antwerp in 1550?",
    ]
    a, b = emb.embed(texts), emb.embed(texts)
    assert a.shape[0] == 3 and np.array_equal(a, b)
    assert np.linalg.norm(a, axis=1) == pytest.approx([1.0, 1.0, 1.0])
    sims = cosine_matrix(a, a)
    assert sims[0, 1] > sims[0, 2] and sims[0, 1] > 0.8
    assert medoid_index(a) in (0, 1)


def test_tfidf_empty_inputs():
    emb = TfidfEmbedder()
    assert emb.embed([]).shape[0] == 0
    out = emb.embed(["", "  "])
    assert out.shape[0] == 2 and not out.any()
    mixed = emb.embed(["printing press", ""])
    assert np.linalg.norm(mixed[0]) == pytest.approx(1.0) and not mixed[1].any()


def test_tfidf_reference_texts_change_idf_not_shape():
    texts = ["printing press", "press freedom"]
    plain = TfidfEmbedder().embed(texts)
    ref = TfidfEmbedder(["the press of the crowd", "a printing shop"]).embed(texts)
    assert plain.shape[0] == ref.shape[0] == 2
    assert not np.allclose(cosine_matrix(plain, plain), cosine_matrix(ref, ref))
    assert TfidfEmbedder(ngram_range=(2, 4), analyzer="char").name == "tfidf-char-2-4@sklearn"


async def test_tfidf_aembed():
    emb = TfidfEmbedder()
    out = await emb.aembed(["a question", "another question"])
    assert out.shape[0] == 2


@pytest.fixture
def server():
    s = ScriptedServer(Script(embeddings={"fixed": [3.0, 4.0] + [0.0] * 62})).start()
    yield s
    s.stop()


async def test_endpoint_embedder_async(server):
    client = ModelClient(
        base_url=server.base_url, api_key="k", model="m", embedding_model="emb-1", retry_backoff_s=0
    )
    emb = EndpointEmbedder(client, session=3)
    assert emb.name == "endpoint:emb-1" and isinstance(emb, Embedder)
    out = await emb.aembed(["fixed", "printing press cause", "printing press"])
    assert out.shape == (3, 64)
    assert out[0, :2] == pytest.approx([0.6, 0.8])
    assert np.linalg.norm(out, axis=1) == pytest.approx([1.0] * 3)
    sims = cosine_matrix(out, out)
    assert sims[1, 2] > 0.7
    assert client.calls[-1].session == 3 and client.calls[-1].model == "emb-1"
    assert server.requests[-1].headers["x-curiosity-session"] == "3"
    # the sync form works from inside a running loop too
    again = emb.embed(["fixed"])
    assert again[0, :2] == pytest.approx([0.6, 0.8])


def test_endpoint_embedder_sync_and_model_override(server):
    client = ModelClient(base_url=server.base_url, api_key="k", model="m", retry_backoff_s=0)
    with pytest.raises(ModelConfigError):
        EndpointEmbedder(client)
    emb = EndpointEmbedder(client, "other-emb")
    assert emb.name == "endpoint:other-emb"
    first = emb.embed(["printing press"])
    second = emb.embed(["printing press"])  # a second event loop: a fresh openai client
    assert np.array_equal(first, second)
    assert server.requests[-1].body["model"] == "other-emb"


async def test_sync_embed_inside_a_loop_keeps_the_loops_connections(server):
    import asyncio

    client = ModelClient(
        base_url=server.base_url, api_key="k", model="m", embedding_model="e", retry_backoff_s=0
    )
    emb = EndpointEmbedder(client)
    await emb.aembed(["warm up"])
    loop = asyncio.get_running_loop()
    ours = client._client()
    emb.embed(["from a helper thread"])  # runs its own loop, closes only that loop's client
    assert client._client() is ours
    assert asyncio.get_running_loop() is loop
    await client.aclose()

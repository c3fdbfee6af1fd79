"""Small local Inspect tasks for xfinder-ray's import fixtures (no dataset download)."""

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import choice, includes, match
from inspect_ai.solver import generate, multiple_choice

TRIVIA = [
    ("What is the capital of France?", ["Berlin", "Paris", "Madrid", "Rome"], "B"),
    ("How many legs does a spider have?", ["Six", "Four", "Eight", "Ten"], "C"),
    ("Which planet is known as the Red Planet?", ["Mars", "Venus", "Jupiter", "Saturn"], "A"),
    ("What is the largest ocean on Earth?", ["Atlantic", "Indian", "Arctic", "Pacific"], "D"),
    ("Which gas do plants absorb from the air?", ["Oxygen", "Carbon dioxide", "Nitrogen", "Helium"], "B"),
]

ARITH = [
    ("What is 12 + 7?", "19"),
    ("What is 9 times 6?", "54"),
    ("A box holds 8 apples. How many apples are in 3 boxes?", "24"),
    ("What is 100 minus 37?", "63"),
    ("Tom has 15 marbles and gives away 6. How many marbles does he have left?", "9"),
]

BOOLQ = [
    ("Is water wet? Answer yes or no.", "yes"),
    ("Is the sun a planet? Answer yes or no.", "no"),
    ("Do cats have four legs? Answer yes or no.", "yes"),
    ("Is ice hotter than boiling water? Answer yes or no.", "no"),
]


@task
def trivia_mc():
    return Task(
        dataset=MemoryDataset(
            [Sample(input=q, choices=c, target=t, id=f"q{i + 1}") for i, (q, c, t) in enumerate(TRIVIA)],
            name="trivia_mc",
        ),
        solver=multiple_choice(),
        scorer=choice(),
    )


@task
def arith_qa():
    return Task(
        dataset=MemoryDataset(
            [Sample(input=q, target=t, id=i + 1) for i, (q, t) in enumerate(ARITH)], name="arith_qa"
        ),
        solver=generate(),
        scorer=match(numeric=True),
    )


@task
def boolq_mini():
    return Task(
        dataset=MemoryDataset(
            [Sample(input=q, target=t, id=i + 1) for i, (q, t) in enumerate(BOOLQ)], name="boolq_mini"
        ),
        solver=generate(),
        scorer=includes(),
    )

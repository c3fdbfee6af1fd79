"""The embedded sample: realistic LLM evaluation responses with gold key answers, and a fast synthetic generator.

`make demo` scores `xfinder_ray/data/sample_responses.parquet`, which `write_sample` builds from the question
banks and response templates below (all written for this project). Every model answers the same questions,
as on a leaderboard; models differ in skill (an item-response model decides whether a model "knows" each
answer) and in style (which kinds of response it tends to write). Each row carries the annotation a careful
annotator would give under the KAF rules in the shared data README (shared/data/README.md beside the project) (`gold_key_answer`, `gold_judgment`),
so ablations can measure extractors against it. About 1% of rows are deliberately invalid records
(`defect` set) so the rejects table has content.

`iter_synthetic_tables` / `synthesize` resample a larger pool of such rows into big inputs (1M rows in a few
seconds) with unique record ids, for benchmarks.

Regenerate the shipped file with `python -m xfinder_ray.sample_data --out xfinder_ray/data/sample_responses.parquet`.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import random
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from xfinder_ray.records import FIELDS, MATH_ANSWER_RANGE, NO_VALID_ANSWER

SAMPLE_PATH = Path(__file__).parent / "data" / "sample_responses.parquet"
DEFAULT_QUESTIONS_PER_TASK = 32
BAD_FRACTION = 0.01

# Columns beyond the canonical ones: what the row is (question_id, response_kind, defect) and its annotation.
EXTRA_FIELDS = ("question_id", "response_kind", "gold_key_answer", "gold_judgment", "defect")
SCHEMA = pa.schema(
    [pa.field(name, pa.string()) for name in FIELDS]
    + [
        pa.field("question_id", pa.string()),
        pa.field("response_kind", pa.string()),
        pa.field("gold_key_answer", pa.string()),
        pa.field("gold_judgment", pa.bool_()),
        pa.field("defect", pa.string()),
    ]
)

# Response kinds whose gold key answer is always [No valid answer].
NO_ANSWER_KINDS = frozenset(
    {"fluctuation", "refusal", "irrelevant", "truncated", "empty", "not_in_range", "all_options"}
)
# Which kinds each key_answer_type can produce, with base weights (a model's style multiplies them).
KIND_WEIGHTS: dict[str, dict[str, float]] = {
    "alphabet_option": {
        "direct": 10, "answer_is": 14, "cot": 18, "markdown": 6, "boxed": 2, "option_text": 5,
        "correction": 3, "negation_trap": 3, "multilingual": 2, "repetition_loop": 3,
        "fluctuation": 2, "refusal": 1.2, "irrelevant": 1.2, "truncated": 2, "empty": 1.2,
        "not_in_range": 1.5, "all_options": 1.2,
    },
    "short_text": {
        "direct": 12, "answer_is": 14, "cot": 16, "markdown": 6, "correction": 3.5, "negation_trap": 3.5,
        "multilingual": 3, "repetition_loop": 3.5, "fluctuation": 3, "refusal": 2, "irrelevant": 2,
        "truncated": 2.5, "empty": 2, "not_in_range": 3, "all_options": 2,
    },
    "categorical_label": {
        "direct": 14, "answer_is": 14, "cot": 16, "markdown": 6, "correction": 3, "negation_trap": 3,
        "multilingual": 2, "repetition_loop": 3, "fluctuation": 2, "refusal": 1.2, "irrelevant": 1.2,
        "truncated": 2, "empty": 1.2, "not_in_range": 1.5, "all_options": 1.2,
    },
    "math": {
        "direct": 6, "answer_is": 10, "cot": 18, "markdown": 5, "boxed": 10, "hash": 8, "equiv_format": 12,
        "correction": 3, "negation_trap": 2, "multilingual": 2, "repetition_loop": 3, "fluctuation": 2,
        "refusal": 1, "irrelevant": 1.2, "truncated": 4, "empty": 1.2,
    },
}  # fmt: skip
RESPONSE_KINDS = tuple(sorted({k for w in KIND_WEIGHTS.values() for k in w}))
DEFECTS = ("null_question", "unknown_key_answer_type", "unparseable_range", "correct_not_in_range")


# --------------------------------------------------------------------------------------------- models, tasks


@dataclass(frozen=True)
class ModelProfile:
    name: str
    skill: float  # logit of answering a question of average difficulty correctly
    style: dict[str, float] = field(default_factory=dict)  # multipliers on KIND_WEIGHTS


def _messy(x: float) -> dict[str, float]:
    """Multiplier for every format failure: how often a model rambles, loops, refuses or is cut off."""
    return {k: x for k in (*NO_ANSWER_KINDS, "repetition_loop")}


# Listed strongest first: the leaderboard of the sample should come out in this order.
MODELS: tuple[ModelProfile, ...] = (
    ModelProfile("qwen2-7b-instruct", 2.2, {**_messy(0.5), "boxed": 3, "cot": 1.5, "multilingual": 1.5}),
    ModelProfile("glm-4-9b-chat", 2.0, {**_messy(0.6), "markdown": 2, "multilingual": 3}),
    ModelProfile("gemma-2-9b-it", 1.9, {**_messy(0.7), "markdown": 4, "direct": 0.6}),
    ModelProfile(
        "llama-3-8b-instruct", 1.15, {**_messy(0.8), "answer_is": 2, "cot": 1.5, "negation_trap": 1.5}
    ),
    ModelProfile("internlm2-chat-7b", 1.0, {**_messy(1.0), "multilingual": 4, "repetition_loop": 2}),
    ModelProfile("phi-3-mini", 0.9, {**_messy(1.3), "truncated": 3, "repetition_loop": 2.5, "hash": 2}),
    ModelProfile(
        "mistral-7b-instruct", 0.3, {**_messy(1.5), "option_text": 2.5, "fluctuation": 3, "cot": 1.3}
    ),
    ModelProfile(
        "baichuan2-7b-chat",
        0.0,
        {**_messy(2.2), "multilingual": 6, "repetition_loop": 5, "refusal": 4, "direct": 1.5},
    ),
)


@dataclass(frozen=True)
class TaskSpec:
    name: str
    slug: str  # used in question and record ids
    key_answer_type: str
    offset: float  # task difficulty added to every question's difficulty


TASKS: tuple[TaskSpec, ...] = (
    TaskSpec("MMLU", "mmlu", "alphabet_option", 0.4),
    TaskSpec("ARC-Challenge", "arc", "alphabet_option", -0.2),
    TaskSpec("CommonsenseQA_text", "csqa", "short_text", -0.2),
    TaskSpec("BoolQ", "boolq", "categorical_label", -0.5),
    TaskSpec("AgNews", "agnews", "categorical_label", -0.8),
    TaskSpec("SST-2", "sst2", "categorical_label", -1.2),
    TaskSpec("GSM8K", "gsm8k", "math", 0.6),
    TaskSpec("MATH", "math", "math", 1.4),
)
TASKS_BY_NAME = {t.name: t for t in TASKS}

# --------------------------------------------------------------------------------------------- question banks
# Written for this project. Multiple choice: (question, correct, distractors); options are shuffled per seed.

MMLU_BANK: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("Which amendment to the U.S. Constitution abolished slavery?", "Thirteenth", ("First", "Fifteenth", "Nineteenth")),
    ("In macroeconomics, what does GDP stand for?", "Gross Domestic Product", ("General Debt Percentage", "Government Deficit Projection", "Global Demand Price")),
    ("What is the derivative of sin(x) with respect to x?", "cos(x)", ("-cos(x)", "tan(x)", "-sin(x)")),
    ("Which organelle is the main site of aerobic respiration in eukaryotic cells?", "mitochondrion", ("ribosome", "Golgi apparatus", "lysosome")),
    ("Which fallacy attacks the person making an argument instead of the argument itself?", "ad hominem", ("straw man", "false dilemma", "slippery slope")),
    ("What is the worst-case time complexity of binary search on a sorted array of n elements?", "O(log n)", ("O(1)", "O(n)", "O(n log n)")),
    ("Which psychologist proposed the hierarchy of needs?", "Abraham Maslow", ("Sigmund Freud", "B. F. Skinner", "Jean Piaget")),
    ("In which year did the Berlin Wall fall?", "1989", ("1985", "1991", "1993")),
    ("Which gas makes up the largest share of Earth's atmosphere by volume?", "nitrogen", ("oxygen", "carbon dioxide", "argon")),
    ("Which of the following numbers is prime?", "59", ("51", "57", "63")),
    ("Who formulated the three laws of planetary motion?", "Johannes Kepler", ("Galileo Galilei", "Tycho Brahe", "Nicolaus Copernicus")),
    ("What is the SI unit of electrical resistance?", "ohm", ("volt", "ampere", "watt")),
    ("Which branch of law mainly governs contract disputes between private parties?", "civil law", ("criminal law", "constitutional law", "international law")),
    ("Which financial statement reports assets, liabilities and equity at a point in time?", "balance sheet", ("income statement", "cash flow statement", "statement of retained earnings")),
    ("Which philosopher wrote 'The Republic'?", "Plato", ("Aristotle", "Socrates", "Epicurus")),
    ("A market with a single seller and no close substitutes is called a", "monopoly", ("oligopoly", "monopsony", "perfectly competitive market")),
    ("Which red blood cell type is considered the universal donor?", "O negative", ("AB positive", "A positive", "B negative")),
    ("Which data structure removes elements in last-in, first-out order?", "stack", ("queue", "heap", "hash table")),
    ("What is the value of log base 2 of 64?", "6", ("5", "8", "32")),
    ("Which treaty formally ended World War I between the Allies and Germany?", "Treaty of Versailles", ("Treaty of Paris", "Treaty of Westphalia", "Treaty of Tordesillas")),
    ("Which hormone lowers blood glucose by promoting its uptake into cells?", "insulin", ("glucagon", "adrenaline", "cortisol")),
    ("The Doppler effect describes a change in which property of a wave as observed by a moving listener?", "frequency", ("amplitude", "speed in vacuum", "polarization")),
    ("In a data set with a few extreme outliers, which measure of center changes the most?", "mean", ("median", "mode", "interquartile range")),
    ("Which civilization built Machu Picchu?", "Inca", ("Aztec", "Maya", "Olmec")),
    ("What is the chemical formula of table salt?", "NaCl", ("KCl", "NaOH", "CaCl2")),
    ("Which of the following is NOT one of the primary colors of light in the RGB model?", "yellow", ("red", "green", "blue")),
    ("How many senators does each U.S. state elect?", "two", ("one", "four", "a number set by its population")),
    ("Which programming paradigm models computation as the evaluation of functions without mutable state?", "functional programming", ("object-oriented programming", "procedural programming", "logic programming")),
    ("Which part of the brain is chiefly responsible for balance and coordination?", "cerebellum", ("cerebrum", "medulla oblongata", "hypothalamus")),
    ("Who wrote 'The General Theory of Employment, Interest and Money'?", "John Maynard Keynes", ("Adam Smith", "Milton Friedman", "Friedrich Hayek")),
    ("A fair coin is tossed three times. What is the probability of exactly two heads?", "3/8", ("1/8", "1/4", "1/2")),
    ("A deficiency of which vitamin causes scurvy?", "vitamin C", ("vitamin A", "vitamin B12", "vitamin D")),
    ("Which sorting algorithm has a worst-case running time of O(n log n)?", "merge sort", ("quicksort", "bubble sort", "insertion sort")),
    ("What is the process by which plants lose water vapour through their leaves called?", "transpiration", ("photosynthesis", "germination", "osmosis")),
    ("Who painted the ceiling of the Sistine Chapel?", "Michelangelo", ("Leonardo da Vinci", "Raphael", "Donatello")),
    ("Which layer of the OSI model is responsible for routing packets between networks?", "network layer", ("physical layer", "transport layer", "session layer")),
)  # fmt: skip

ARC_BANK: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("Which property of a mineral can be observed just by looking at it?", "luster", ("mass", "density", "hardness")),
    ("A metal spoon is left in a pot of hot soup and its handle soon feels warm. How did the heat reach the handle?", "conduction", ("convection", "radiation", "evaporation")),
    ("Which of these is an example of a chemical change?", "an iron nail rusting", ("ice melting", "paper being torn", "water boiling")),
    ("What is the main source of energy for most food chains on Earth?", "the Sun", ("soil", "water", "wind")),
    ("Which planet is closest to the Sun?", "Mercury", ("Venus", "Earth", "Mars")),
    ("Which layer of Earth lies directly beneath the crust?", "the mantle", ("the outer core", "the inner core", "the atmosphere")),
    ("What causes the seasons on Earth?", "the tilt of Earth's axis", ("the distance between Earth and the Moon", "the rotation of the Sun", "ocean currents")),
    ("A ramp used to push a heavy box onto a truck is which kind of simple machine?", "an inclined plane", ("a pulley", "a lever", "a wheel and axle")),
    ("Which body system carries oxygen to the cells of the body?", "the circulatory system", ("the digestive system", "the skeletal system", "the nervous system")),
    ("An animal that eats only plants is called a", "herbivore", ("carnivore", "decomposer", "predator")),
    ("Which tool is best for measuring the volume of a liquid?", "a graduated cylinder", ("a thermometer", "a spring scale", "a meter stick")),
    ("What happens to most solid materials when they are heated?", "they expand", ("they contract", "they become magnetic", "they lose mass")),
    ("Water vapor turning into liquid droplets on a cold glass is called", "condensation", ("evaporation", "melting", "sublimation")),
    ("Which of these resources can be replaced naturally within a human lifetime?", "timber from trees", ("coal", "petroleum", "natural gas")),
    ("What do the rings in a cross-section of a tree trunk usually show?", "the age of the tree", ("the height of the tree", "the number of branches", "the kind of soil")),
    ("Which part of a plant absorbs most of the water it needs from the soil?", "the roots", ("the flowers", "the leaves", "the seeds")),
    ("Which form of energy is stored in a stretched rubber band?", "elastic potential energy", ("sound energy", "nuclear energy", "light energy")),
    ("Why does the Moon appear to change shape over a month?", "different amounts of its sunlit side are visible from Earth", ("clouds cover parts of it", "Earth's shadow covers it every night", "it changes size as it orbits")),
    ("Which of these traits is inherited rather than learned?", "eye color", ("riding a bicycle", "speaking French", "playing chess")),
    ("Fossils of sea shells are found at the top of a mountain. What does this suggest?", "the area was once covered by water", ("the shells were carried there by birds", "sea animals once lived on mountains", "the mountain is made of shells")),
    ("Which unit is used to measure force?", "the newton", ("the liter", "the gram", "the degree Celsius")),
    ("Which statement describes a solid?", "it has a definite shape and a definite volume", ("it has no definite shape or volume", "it takes the shape of its container", "it always floats on water")),
    ("Through which material does sound travel fastest?", "steel", ("air", "water", "a vacuum")),
    ("Which object would a magnet attract?", "an iron nail", ("a plastic cup", "a wooden spoon", "a glass marble")),
    ("What is the main job of the tiny openings called stomata on a leaf?", "to let gases move in and out of the leaf", ("to absorb water from the soil", "to attract insects", "to store sugar")),
    ("Where do most earthquakes occur?", "along the boundaries of tectonic plates", ("in the middle of oceans far from plate edges", "only near the equator", "only in deserts")),
    ("Which gas do plants take in from the air to make food?", "carbon dioxide", ("oxygen", "nitrogen", "helium")),
    ("What does a food web show?", "the feeding relationships among organisms", ("the water cycle", "the layers of soil", "the life cycle of a single plant")),
    ("Which of these organisms is a producer?", "grass", ("a rabbit", "a hawk", "a mushroom")),
    ("At sea level, pure water boils at", "100 degrees Celsius", ("0 degrees Celsius", "50 degrees Celsius", "212 degrees Celsius")),
    ("A ball rolling across grass slows down and stops. Which force causes this?", "friction", ("magnetism", "gravity pulling it sideways", "buoyancy")),
    ("Which organ filters waste from the blood and produces urine?", "the kidney", ("the heart", "the lung", "the stomach")),
    ("What is the best way to make an experiment a fair test?", "change only one variable at a time", ("change every variable at once", "repeat it with different materials each time", "record only the results you expect")),
    ("What type of rock forms when magma cools and hardens?", "igneous rock", ("sedimentary rock", "metamorphic rock", "limestone")),
    ("What is a circuit with a break in its path called?", "an open circuit", ("a closed circuit", "a parallel circuit", "a short circuit")),
    ("Which adaptation helps a cactus survive in the desert?", "thick stems that store water", ("large thin leaves", "shallow roots only in wet soil", "bright flowers all year")),
)  # fmt: skip

# (question, correct, distractors, a plausible answer that is not among the choices)
CSQA_BANK: tuple[tuple[str, str, tuple[str, ...], str], ...] = (
    ("Where would you keep milk so that it does not spoil?", "refrigerator", ("cupboard", "garage", "mailbox", "bathtub"), "cooler bag"),
    ("What do people usually do when they are very tired at night?", "go to sleep", ("run errands", "paint the house", "mow the lawn", "file taxes"), "drink coffee"),
    ("If you want to cross a river without getting wet, what could you use?", "bridge", ("umbrella", "towel", "ladder", "map"), "ferry"),
    ("Where can you borrow many books for free?", "library", ("bookstore", "printer", "post office", "bakery"), "a friend's shelf"),
    ("What is a common result of exercising regularly?", "better fitness", ("higher taxes", "longer hair", "louder voice", "colder hands"), "more sleep"),
    ("Where do you usually put dirty dishes after a meal?", "sink", ("closet", "bed", "garden", "car"), "dishwasher"),
    ("What would you use to write a note on paper?", "pen", ("fork", "spoon", "comb", "hammer"), "typewriter"),
    ("If someone is laughing at a joke, what are they probably feeling?", "amusement", ("anger", "fear", "grief", "boredom"), "embarrassment"),
    ("Where does a pilot usually work?", "airplane", ("submarine", "classroom", "kitchen", "farm"), "control tower"),
    ("What must you do before you can legally drive a car?", "get a license", ("buy a boat", "learn to swim", "plant a tree", "paint the car"), "pass a medical exam"),
    ("What should a person carry to stay dry in the rain?", "umbrella", ("sunglasses", "fan", "shovel", "blanket"), "newspaper"),
    ("What do bees produce?", "honey", ("milk", "cotton", "wool", "rubber"), "pollen"),
    ("Where in a city could you see lions, zebras and giraffes on one visit?", "zoo", ("museum", "aquarium", "office", "library"), "circus"),
    ("What do people usually do at a funeral?", "mourn", ("celebrate a birthday", "go shopping", "play football", "sunbathe"), "give speeches"),
    ("Where would you go to buy fresh bread in the morning?", "bakery", ("pharmacy", "gas station", "bank", "cinema"), "street market"),
    ("What happens to ice cream left in the hot sun?", "it melts", ("it freezes", "it grows", "it sings", "it hardens"), "it attracts ants"),
    ("What does a person usually do right after an alarm clock rings in the morning?", "wake up", ("fall asleep", "eat dinner", "go to bed", "take a nap"), "press snooze"),
    ("Where would you put a letter so that the postal service collects it?", "mailbox", ("oven", "fishbowl", "drawer", "shoe"), "front desk"),
    ("How do people often feel after finishing a big project successfully?", "satisfied", ("hungry", "jealous", "confused", "afraid"), "exhausted"),
    ("Which place is known for sand, sunshine and waves?", "beach", ("forest", "mountain top", "library", "office"), "resort"),
    ("What would you use to cut a sheet of paper?", "scissors", ("spoon", "pillow", "bucket", "broom"), "paper knife"),
    ("Why do people wear coats in winter?", "to stay warm", ("to look taller", "to run faster", "to stay wet", "to hear better"), "to look fashionable"),
    ("Where is the safest place to keep a large amount of money?", "bank", ("park bench", "street", "bus stop", "pond"), "safe at home"),
    ("What might a child do with a new box of crayons?", "draw a picture", ("cook dinner", "fix a car", "mow the grass", "pay the bills"), "trade them"),
    ("What do you call a place where planes take off and land?", "airport", ("harbor", "train station", "stadium", "garage"), "airstrip"),
    ("What would you do with a key?", "unlock a door", ("bake a cake", "water the plants", "climb a tree", "call a friend"), "start a car"),
    ("What is a good way to learn a new language?", "practice speaking", ("sleep all day", "avoid books", "stare at the floor", "eat spicy food"), "move abroad"),
    ("What do most farmers use to plow large fields today?", "tractor", ("bicycle", "canoe", "skateboard", "elevator"), "ox"),
    ("In which room of a typical house would you find a sofa?", "living room", ("bathtub", "roof", "garage door", "chimney"), "basement"),
    ("What happens to a houseplant that is not watered for weeks?", "it wilts", ("it glows", "it walks away", "it doubles in size", "it turns blue"), "it needs repotting"),
    ("How do many students feel right before an important exam?", "nervous", ("invisible", "weightless", "frozen", "magnetic"), "excited"),
    ("Where do astronauts train for space missions?", "space center", ("shopping mall", "fire station", "barbershop", "bakery"), "swimming pool"),
    ("What does a very generous person like to do?", "share", ("hoard", "steal", "complain", "hide"), "volunteer"),
    ("What do you use to see your way in the dark?", "flashlight", ("blanket", "spoon", "chair", "sock"), "phone"),
    ("What do you need to keep a campfire burning?", "wood", ("ice", "sand", "snow", "water"), "paper"),
    ("Where would you expect to hear an orchestra perform?", "concert hall", ("car wash", "dentist office", "hardware store", "parking lot"), "church"),
)  # fmt: skip

# (passage, question, answer)
BOOLQ_BANK: tuple[tuple[str, str, bool], ...] = (
    ("The Great Wall of China is a series of fortifications built over many centuries. Despite a popular claim, it cannot be seen with the naked eye from low Earth orbit under normal conditions.", "can you see the great wall of china from space with the naked eye", False),
    ("Venus is the second planet from the Sun. Its thick carbon dioxide atmosphere traps heat, making it the hottest planet in the Solar System, even hotter than Mercury.", "is venus hotter than mercury", True),
    ("Penguins are flightless seabirds found almost entirely in the Southern Hemisphere; only the Galapagos penguin lives near the equator.", "do penguins live at the north pole", False),
    ("Peanuts are legumes that develop underground, unlike true nuts such as hazelnuts, which grow on trees.", "is a peanut a true nut", False),
    ("The Pacific is the largest and deepest of Earth's oceans, covering about one third of the planet's surface.", "is the pacific ocean the largest ocean", True),
    ("Bats give birth to live young and feed them milk. They are the only mammals capable of sustained flight.", "are bats mammals", True),
    ("Mount Everest, on the border of Nepal and China, has the highest elevation above sea level of any mountain, although Mauna Kea is taller measured from its base on the sea floor.", "is mount everest the highest mountain above sea level", True),
    ("The modern Olympic Games began in Athens in 1896. Since 1994 the Summer and Winter Games have been held two years apart.", "are the summer and winter olympics held in the same year", False),
    ("Sharks have skeletons made of cartilage, a flexible tissue that is lighter than bone.", "do sharks have skeletons made of bone", False),
    ("The human heart has four chambers: two atria, which receive blood, and two ventricles, which pump it out.", "does the human heart have four chambers", True),
    ("Lightning often strikes the same place more than once; tall buildings such as the Empire State Building are hit many times every year.", "can lightning strike the same place twice", True),
    ("Old window panes that are thicker at the bottom were usually installed that way. Glass at room temperature is an amorphous solid that does not flow noticeably over centuries.", "does glass slowly flow downward over the centuries", False),
    ("The Amazon carries more water to the sea than any other river on Earth, although the Nile is usually listed as slightly longer.", "does the amazon carry more water than the nile", True),
    ("Experiments show that goldfish can remember feeding times and sounds for months.", "do goldfish have a memory of only a few seconds", False),
    ("Antibiotics kill bacteria or stop them from multiplying. They have no effect on viruses, such as those that cause the common cold.", "do antibiotics cure the common cold", False),
    ("Canada has ten provinces and three territories. Its capital is Ottawa, while Toronto is its largest city.", "is toronto the capital of canada", False),
    ("The Moon has only an extremely thin exosphere, so there is essentially no air on its surface.", "does the moon have a thick atmosphere", False),
    ("Sealed honey resists spoiling because of its low water content and acidity; jars of edible honey have been found in ancient tombs.", "can honey last for a very long time without spoiling", True),
    ("Because air pressure drops with altitude, water boils at a lower temperature on a high mountain than at sea level.", "does water boil at a lower temperature high up a mountain", True),
    ("The Sahara is the largest hot desert, but Antarctica, which receives very little precipitation, is the largest desert overall.", "is the sahara the largest desert in the world overall", False),
    ("Diamond and graphite are both forms of pure carbon; they differ only in how the carbon atoms are arranged.", "are diamonds made of carbon", True),
    ("The blue whale can reach about 30 meters in length and is the largest animal known to have ever lived, larger than any dinosaur.", "is the blue whale bigger than any dinosaur", True),
    ("Spiders are arachnids with eight legs and two body segments, while insects have six legs and three body segments.", "is a spider an insect", False),
    ("In chess, a pawn that reaches the opposite side of the board is promoted to a queen, rook, bishop or knight.", "can a pawn become a queen in chess", True),
    ("The Statue of Liberty was designed by French sculptor Frederic Auguste Bartholdi and given to the United States by the people of France in 1886.", "was the statue of liberty a gift from france", True),
    ("Banana plants are large herbs: their apparent trunk is made of tightly packed leaf bases rather than wood.", "is the banana plant a tree", False),
    ("A leap year adds February 29, giving the year 366 days instead of 365.", "does a leap year have 366 days", True),
    ("Ostriches cannot fly, but they can run at about 70 kilometers per hour, faster than any other bird on land.", "can an ostrich fly", False),
    ("To protect it from rust, the Eiffel Tower is repainted by hand roughly every seven years.", "is the eiffel tower repainted regularly", True),
    ("Koalas are marsupials native to Australia. Despite the name koala bear, they are not related to bears.", "is a koala a kind of bear", False),
    ("Human blood is always red. Veins look bluish because of the way light passes through skin.", "is the blood in human veins blue", False),
    ("The Mediterranean Sea connects to the Atlantic Ocean through the narrow Strait of Gibraltar.", "is the mediterranean sea connected to the atlantic ocean", True),
    ("Chameleons change color mostly to regulate body temperature and to signal to other chameleons; blending in with the background is a minor factor.", "do chameleons change color mainly for camouflage", False),
    ("Light travels about 300,000 kilometers per second in a vacuum, while sound travels about 343 meters per second in air.", "does light travel faster than sound", True),
    ("Bamboo is a giant grass, and some species can grow close to a meter in a single day.", "is bamboo a type of grass", True),
    ("The Titanic struck an iceberg and sank in April 1912 during its maiden voyage from Southampton to New York.", "did the titanic sink on its first voyage", True),
)  # fmt: skip

AGNEWS_LABELS = ("World", "Sports", "Business", "Sci/Tech")
# (title, description, label)
AGNEWS_BANK: tuple[tuple[str, str, str], ...] = (
    ("Ceasefire talks resume as envoys press for aid corridors", "Diplomats from both sides met on Monday under UN mediation while relief groups urged safe passage for convoys.", "World"),
    ("Floods displace thousands in coastal delta", "Monsoon rains have pushed rivers over their banks, and the government has opened emergency shelters in three provinces.", "World"),
    ("Prime minister survives no-confidence vote", "The governing coalition held together by four votes after a stormy late-night debate in parliament.", "World"),
    ("Strong earthquake strikes off the Pacific coast", "A magnitude 6.8 quake shook coastal towns, and officials briefly issued a tsunami warning before lifting it.", "World"),
    ("Leaders gather for summit on migration", "Heads of government will discuss border cooperation and refugee resettlement at a two-day meeting.", "World"),
    ("UN extends peacekeeping mission for another year", "The Security Council voted unanimously to keep 12,000 troops in the region amid fragile peace.", "World"),
    ("Election result sparks protests in the capital", "Opposition supporters marched through the city center, alleging fraud in Sunday's presidential vote.", "World"),
    ("Troops deployed as border dispute escalates", "Both governments accused the other of provocations after a clash near a disputed river crossing.", "World"),
    ("Pope urges peace in Easter address", "Speaking to crowds in St. Peter's Square, the pontiff called for an end to conflicts around the world.", "World"),
    ("Late header sends City into the cup final", "A stoppage-time goal from the veteran defender settled a tense semi-final in front of a sold-out crowd.", "Sports"),
    ("Veteran pitcher throws no-hitter in season opener", "The 36-year-old struck out eleven batters as his team won 3-0 on opening day.", "Sports"),
    ("Champion withdraws from the Open with wrist injury", "The top seed said she would need several weeks of rest before returning to the tour.", "Sports"),
    ("Marathon world record falls in Berlin", "Perfect conditions helped the winner shave 30 seconds off the previous best time.", "Sports"),
    ("Rookie quarterback leads overtime comeback", "Trailing by 17 points in the fourth quarter, the first-year starter threw three touchdown passes.", "Sports"),
    ("Visitors clinch test series on final day", "The home side collapsed to 143 all out as the spinners took seven wickets in the last session.", "Sports"),
    ("Teenager sets national record at swimming trials", "The 16-year-old won the 200 meters freestyle and booked her place on the Olympic team.", "Sports"),
    ("Coach fired after five straight losses", "The club's owners said a change was needed to save a season that began with playoff hopes.", "Sports"),
    ("Climber takes the yellow jersey after mountain stage", "A solo attack on the final ascent gave the rider a 40-second lead in the overall standings.", "Sports"),
    ("Oil prices climb as producers extend output cuts", "Brent crude rose 3 percent after major exporters agreed to keep production limits through the winter.", "Business"),
    ("Retail chain to cut 3,000 jobs as sales slump", "The company will close 120 stores and move more of its business online, executives said.", "Business"),
    ("Airline posts record quarterly profit", "Strong summer travel demand and lower fuel costs lifted earnings above analysts' forecasts.", "Business"),
    ("Central bank raises interest rates a quarter point", "Policymakers said inflation remained too high and signaled that further increases were possible.", "Business"),
    ("Carmaker recalls 400,000 vehicles over airbag fault", "Dealers will replace the faulty inflators free of charge, the company said in a filing.", "Business"),
    ("Regulators approve merger of two regional banks", "The combined lender will have assets of about 90 billion dollars and 600 branches.", "Business"),
    ("Chipmaker shares tumble after weak forecast", "The company expects revenue to fall next quarter as customers work through excess inventory.", "Business"),
    ("Coffee chain expands into Asian markets", "The company plans to open 500 outlets over three years through a joint venture with a local partner.", "Business"),
    ("Unemployment falls to lowest level in a decade", "Employers added more jobs than expected last month, led by construction and health care.", "Business"),
    ("Astronomers find planet in habitable zone of nearby star", "The rocky world orbits a red dwarf 40 light-years away at a distance where liquid water could exist.", "Sci/Tech"),
    ("Researchers unveil battery that charges in five minutes", "A new electrode design lets lithium ions move faster without damaging the cell, the team reports.", "Sci/Tech"),
    ("Browser update patches critical security flaw", "Users are urged to install the fix, which closes a hole that let malicious pages run code.", "Sci/Tech"),
    ("Space probe launches on mission to Jupiter's moons", "The spacecraft will spend eight years reaching the giant planet and then study its icy satellites.", "Sci/Tech"),
    ("Gene linked to drought tolerance found in wheat", "Scientists say the discovery could help breeders develop crops that survive longer dry spells.", "Sci/Tech"),
    ("Open-source operating system adds new security features", "The latest release includes memory protections and a redesigned permission system.", "Sci/Tech"),
    ("Lab demonstrates quantum processor with 100 qubits", "The researchers say error rates are low enough to test algorithms that ordinary computers cannot run.", "Sci/Tech"),
    ("Telescope captures image of black hole jet", "The picture shows a stream of particles moving at nearly the speed of light from the galaxy's core.", "Sci/Tech"),
    ("Smartphone maker shows prototype with rollable screen", "The display extends from six to eight inches at the touch of a button, engineers demonstrated.", "Sci/Tech"),
)  # fmt: skip

# (sentence, label)
SST2_BANK: tuple[tuple[str, str], ...] = (
    ("a gorgeous , witty , seductive movie .", "positive"),
    (
        "the performances are uniformly excellent , and the script never talks down to its audience .",
        "positive",
    ),
    ("an exhilarating ride that earns every one of its surprises .", "positive"),
    ("a tender , funny and ultimately heartbreaking portrait of a family .", "positive"),
    ("the director keeps the tension tight from the first frame to the last .", "positive"),
    ("one of the most original comedies in years .", "positive"),
    ("beautifully shot and wonderfully acted .", "positive"),
    ("a smart , sly thriller that rewards patient viewers .", "positive"),
    ("the cast seems to be having a blast , and so did i .", "positive"),
    ("its warmth and humor sneak up on you .", "positive"),
    ("a rare sequel that improves on the original .", "positive"),
    ("the soundtrack alone is worth the price of admission .", "positive"),
    ("moving without ever becoming sentimental .", "positive"),
    ("an intelligent , grown-up drama with real emotional punch .", "positive"),
    ("clever dialogue and a terrific lead performance carry the day .", "positive"),
    ("a joyous celebration of friendship .", "positive"),
    ("you 'll leave the theater smiling .", "positive"),
    ("confident , stylish filmmaking from a first-time director .", "positive"),
    ("a tedious , overlong mess that mistakes noise for excitement .", "negative"),
    ("the jokes land with a dull thud .", "negative"),
    ("flat characters and a plot full of holes .", "negative"),
    ("i kept checking my watch .", "negative"),
    ("a lazy remake with nothing new to say .", "negative"),
    ("the dialogue is so wooden you could build a fence with it .", "negative"),
    ("even the talented cast can not rescue this dreary script .", "negative"),
    ("a predictable , joyless slog .", "negative"),
    ("the twist ending is both obvious and absurd .", "negative"),
    ("sloppy editing makes the action scenes impossible to follow .", "negative"),
    ("it 's the kind of movie that gives sequels a bad name .", "negative"),
    ("pretentious and painfully slow .", "negative"),
    ("the film never decides what it wants to be .", "negative"),
    ("a waste of a promising premise .", "negative"),
    ("characters you will forget before the credits roll .", "negative"),
    ("embarrassingly cheap special effects .", "negative"),
    ("nothing about this film feels sincere .", "negative"),
    ("two hours i will never get back .", "negative"),
)

# Answers outside the candidates, per task (a model answering these gets [No valid answer]).
OFF_RANGE = {
    "BoolQ": ("Maybe", "It depends", "Unknown"),
    "AgNews": ("Politics", "Entertainment", "Health", "Lifestyle"),
    "SST-2": ("neutral", "mixed"),
}
NAMES = (
    "Maya",
    "Liam",
    "Priya",
    "Diego",
    "Hana",
    "Omar",
    "Chloe",
    "Mateo",
    "Aisha",
    "Noah",
    "Elena",
    "Kenji",
)
MAX_MATH_QUESTIONS = 5_000

# --------------------------------------------------------------------------------------------- data classes


@dataclass(frozen=True)
class MathAnswer:
    text: str  # canonical LaTeX/plain rendering, as a benchmark's ground truth writes it
    # Equivalent renderings a model may write instead: (as written in the response, the key answer it yields).
    alts: tuple[tuple[str, str], ...] = ()
    value: Any = None  # for checking that wrong answers really differ


@dataclass(frozen=True)
class Question:
    qid: str
    task: TaskSpec
    text: str  # the question as the model saw it
    answer_range: Any  # list of [letter, text] pairs, list of candidates, or MATH_ANSWER_RANGE
    correct: str  # letter / candidate / math ground truth
    keys: tuple[str, ...] = ()  # answer keys: letters for alphabet_option, candidates otherwise
    texts: tuple[str, ...] = ()  # what each key means (option text; the candidate itself otherwise)
    off_range: tuple[str, ...] = ()  # plausible answers outside the range
    difficulty: float = 0.0
    context: str = ""  # a short quote (passage sentence, headline, review) for reasoning templates
    answer: MathAnswer | None = None
    wrong: tuple[MathAnswer, ...] = ()
    steps: tuple[str, ...] = ()
    unit: str = ""
    money: bool = False


def _rng(*parts: object) -> random.Random:
    # str seeds are hashed with SHA-512: the same stream on every platform and Python version.
    return random.Random("|".join(map(str, parts)))


def _difficulty(seed: int, qid: str) -> float:
    return _rng(seed, "difficulty", qid).gauss(0.0, 1.1)


# --------------------------------------------------------------------------------------------- non-math questions


def _choice_question(
    task: TaskSpec, i: int, seed: int, q: str, correct: str, distractors: Sequence[str]
) -> Question:
    qid = f"{task.slug}-{i:03d}"
    options = [correct, *distractors]
    _rng(seed, "options", qid).shuffle(options)
    letters = tuple("ABCDEFGH"[: len(options)])
    text = q + "\nAnswer Choices: " + " ".join(f"({k}) {t}" for k, t in zip(letters, options, strict=True))
    return Question(
        qid=qid,
        task=task,
        text=text,
        answer_range=[[k, t] for k, t in zip(letters, options, strict=True)],
        correct=letters[options.index(correct)],
        keys=letters,
        texts=tuple(options),
        off_range=("ABCDEFGH"[len(options)], "None of the above"),
        difficulty=_difficulty(seed, qid),
        context=q,
    )


def _list_question(
    task: TaskSpec,
    i: int,
    seed: int,
    text: str,
    candidates: Sequence[str],
    correct: str,
    off: Sequence[str],
    ctx: str,
) -> Question:
    qid = f"{task.slug}-{i:03d}"
    return Question(
        qid=qid,
        task=task,
        text=text,
        answer_range=list(candidates),
        correct=correct,
        keys=tuple(candidates),
        texts=tuple(candidates),
        off_range=tuple(off),
        difficulty=_difficulty(seed, qid),
        context=ctx,
    )


def _bank_questions(task: TaskSpec, n: int, seed: int) -> list[Question]:
    out: list[Question] = []
    if task.name in ("MMLU", "ARC-Challenge"):
        bank = MMLU_BANK if task.name == "MMLU" else ARC_BANK
        for i, (q, c, d) in enumerate(bank[:n]):
            out.append(_choice_question(task, i, seed, q, c, d))
    elif task.name == "CommonsenseQA_text":
        for i, (q, c, d, off) in enumerate(CSQA_BANK[:n]):
            cands = [c, *d]
            _rng(seed, "options", f"{task.slug}-{i:03d}").shuffle(cands)
            text = f"{q}\nAnswer Choices: {' / '.join(cands)}"
            out.append(_list_question(task, i, seed, text, cands, c, (off,), q))
    elif task.name == "BoolQ":
        for i, (passage, q, ans) in enumerate(BOOLQ_BANK[:n]):
            text = f"Read the passage and answer the question with True or False.\nPassage: {passage}\nQuestion: {q}?"
            first = passage.split(". ")[0].rstrip(".") + "."
            out.append(
                _list_question(task, i, seed, text, ["True", "False"], str(ans), OFF_RANGE["BoolQ"], first)
            )
    elif task.name == "AgNews":
        for i, (title, desc, label) in enumerate(AGNEWS_BANK[:n]):
            text = (
                "Which topic does this news article belong to: World, Sports, Business or Sci/Tech?\n"
                f"Title: {title}\nDescription: {desc}"
            )
            out.append(_list_question(task, i, seed, text, AGNEWS_LABELS, label, OFF_RANGE["AgNews"], title))
    elif task.name == "SST-2":
        for i, (sentence, label) in enumerate(SST2_BANK[:n]):
            text = f"Is the sentiment of this movie review positive or negative?\nReview: {sentence}"
            out.append(
                _list_question(
                    task, i, seed, text, ["positive", "negative"], label, OFF_RANGE["SST-2"], sentence
                )
            )
    else:
        raise ValueError(f"no question bank for task {task.name!r}")
    return out


BANK_SIZES = {
    "MMLU": len(MMLU_BANK),
    "ARC-Challenge": len(ARC_BANK),
    "CommonsenseQA_text": len(CSQA_BANK),
    "BoolQ": len(BOOLQ_BANK),
    "AgNews": len(AGNEWS_BANK),
    "SST-2": len(SST2_BANK),
    "GSM8K": MAX_MATH_QUESTIONS,
    "MATH": MAX_MATH_QUESTIONS,
}


def max_questions_per_task() -> int:
    """The most questions every task can supply (the smallest hand-written bank)."""
    return min(BANK_SIZES.values())


# --------------------------------------------------------------------------------------------- math answers


def _int_answer(v: int, money: bool = False) -> MathAnswer:
    alts: list[tuple[str, str]] = []
    if abs(v) >= 1000:
        alts.append((f"{v:,}", f"{v:,}"))  # thousands separator
    alts.append((f"{v}.0", f"{v}.0"))
    if money:
        alts.append((f"${v:,}.00", f"{v:,}.00"))  # currency sign is not part of the key answer
    return MathAnswer(str(v), tuple(alts), Fraction(v))


def _terminating_decimal(f: Fraction) -> str | None:
    den = f.denominator
    for p in (2, 5):
        while den % p == 0:
            den //= p
    if den != 1:
        return None
    k = 0
    while (10**k) % f.denominator:
        k += 1
    scaled = abs(f.numerator) * (10**k // f.denominator)
    digits = str(scaled).rjust(k + 1, "0")
    s = digits[:-k] + "." + digits[-k:] if k else digits
    return ("-" if f < 0 else "") + s


def _frac_tex(f: Fraction, cmd: str = "frac") -> str:
    if f.denominator == 1:
        return str(f.numerator)
    sign = "-" if f < 0 else ""
    return f"{sign}\\{cmd}{{{abs(f.numerator)}}}{{{f.denominator}}}"


def _frac_answer(f: Fraction, extra: Sequence[tuple[str, str]] = ()) -> MathAnswer:
    if f.denominator == 1:
        return _int_answer(f.numerator)
    alts = [(f"{f.numerator}/{f.denominator}",) * 2, (_frac_tex(f, "dfrac"),) * 2, *extra]
    dec = _terminating_decimal(f)
    if dec is not None:
        alts.insert(0, (dec, dec))
    return MathAnswer(_frac_tex(f), tuple(alts), f)


def _poly(coeffs: Sequence[int], var: str = "x") -> str:
    """Render a polynomial with integer coefficients, highest degree first, the way a textbook writes it."""
    deg = len(coeffs) - 1
    parts: list[str] = []
    for i, c in enumerate(coeffs):
        p = deg - i
        if c == 0:
            continue
        mag = abs(c)
        body = ("" if mag == 1 and p > 0 else str(mag)) + (var if p >= 1 else "") + (f"^{p}" if p > 1 else "")
        if not parts:
            parts.append(("-" if c < 0 else "") + body)
        else:
            parts.append(("- " if c < 0 else "+ ") + body)
    return " ".join(parts) if parts else "0"


def _signed(v: int) -> str:
    return f"+ {v}" if v >= 0 else f"- {-v}"


# --------------------------------------------------------------------------------------------- GSM8K templates
# Each returns (question, answer, steps, wrong answers, unit, money). The templates here (and the MATH
# ones below) are alike in shape, each its own word problem: sample-data text, nothing to share.

MathSpec = tuple[str, int, list[str], list[int], str, bool]


def _g_packs(r: random.Random) -> MathSpec:
    name, item = (
        r.choice(NAMES),
        r.choice(("pencils", "cookies", "marbles", "trading cards", "batteries", "apples")),
    )
    a, b = r.randint(3, 12), r.choice((6, 8, 10, 12, 24))
    c = r.randint(2, a * b // 2)
    ans = a * b - c
    q = f"{name} buys {a} packs of {item} with {b} {item} in each pack and then gives {c} of them to friends. How many {item} does {name} have left?"
    steps = [
        f"{name} buys {a} * {b} = {a * b} {item}.",
        f"After giving away {c}, {name} has {a * b} - {c} = {ans} {item}.",
    ]
    return q, ans, steps, [a * b, a * b + c, ans + b], item, False


def _g_bakery(r: random.Random) -> MathSpec:
    a, d = r.randrange(120, 2600, 10), r.randint(3, 30)
    ans = a * d
    q = f"A bakery bakes {a:,} loaves of bread every day. How many loaves does it bake in {d} days?"
    return (
        q,
        ans,
        [f"Loaves per day: {a:,}.", f"In {d} days: {a} * {d} = {ans}."],
        [a * (d - 1), ans + a, a + d],
        "loaves",
        False,
    )


def _g_wage(r: random.Random) -> MathSpec:
    name = r.choice(NAMES)
    w, h, k = r.randint(12, 45), r.choice((20, 25, 30, 35, 40)), r.randint(2, 8)
    ans = w * h * k
    q = f"{name} earns ${w} per hour and works {h} hours each week. How much does {name} earn in {k} weeks?"
    steps = [f"Weekly pay: {w} * {h} = ${w * h}.", f"In {k} weeks: {w * h} * {k} = ${ans}."]
    return q, ans, steps, [w * h, w * h * (k + 1), w * k * (h - 1)], "dollars", True


def _g_train(r: random.Random) -> MathSpec:
    v, t = r.randrange(40, 125, 5), r.randint(2, 9)
    ans = v * t
    q = f"A train travels at a steady {v} kilometers per hour for {t} hours. How many kilometers does it travel?"
    return (
        q,
        ans,
        [f"Distance = speed * time = {v} * {t} = {ans} km."],
        [v + t, v * (t - 1), ans + v],
        "kilometers",
        False,
    )


def _g_change(r: random.Random) -> MathSpec:
    name, p, n = r.choice(NAMES), r.randint(4, 19), r.randint(2, 6)
    bill = next(b for b in (20, 50, 100, 200) if b > p * n)
    ans = bill - p * n
    q = f"A T-shirt costs ${p}. {name} buys {n} T-shirts and pays with a ${bill} bill. How much change does {name} get?"
    steps = [f"The T-shirts cost {n} * {p} = ${p * n}.", f"Change: {bill} - {p * n} = ${ans}."]
    return q, ans, steps, [p * n, bill - p, ans + p], "dollars", True


def _g_percent(r: random.Random) -> MathSpec:
    n, f = r.randrange(200, 3001, 20), r.choice((10, 20, 25, 30, 40, 60, 75))
    walk = n * f // 100
    ans = n - walk
    q = f"A school has {n:,} students. {f}% of them walk to school and the rest take the bus. How many students take the bus?"
    steps = [f"Students who walk: {f}% of {n} = {walk}.", f"Students who take the bus: {n} - {walk} = {ans}."]
    return q, ans, steps, [walk, n - f, ans - 10], "students", False


def _g_recipe(r: random.Random) -> MathSpec:
    a, b = r.randint(2, 5), r.choice((12, 18, 24))
    c = b * r.randint(2, 6)
    ans = a * c // b
    q = f"A recipe uses {a} cups of flour to make {b} muffins. How many cups of flour are needed to make {c} muffins?"
    steps = [f"{c} muffins is {c} / {b} = {c // b} batches.", f"Flour needed: {c // b} * {a} = {ans} cups."]
    return q, ans, steps, [a * c, ans + a, c // b], "cups", False


def _g_times(r: random.Random) -> MathSpec:
    n1, n2 = r.sample(NAMES, 2)
    x, k = r.randint(5, 40), r.randint(2, 5)
    ans = x + k * x
    q = f"{n1} has {x} marbles. {n2} has {k} times as many marbles as {n1}. How many marbles do they have altogether?"
    steps = [f"{n2} has {k} * {x} = {k * x} marbles.", f"Together: {x} + {k * x} = {ans} marbles."]
    return q, ans, steps, [k * x, x + k, ans + x], "marbles", False


def _g_fence(r: random.Random) -> MathSpec:
    length, width, c = r.randint(8, 40), r.randint(3, 7), r.randint(3, 15)
    per = 2 * (length + width)
    ans = per * c
    q = f"A rectangular garden is {length} meters long and {width} meters wide. Fencing costs ${c} per meter. How much does it cost to fence the whole garden?"
    steps = [f"Perimeter: 2 * ({length} + {width}) = {per} meters.", f"Cost: {per} * {c} = ${ans}."]
    return q, ans, steps, [(length + width) * c, length * width * c, per], "dollars", True


def _g_share(r: random.Random) -> MathSpec:
    b, p = r.randint(3, 12), r.choice((10, 12, 20, 24))
    total = b * p
    c = r.choice([d for d in range(2, 13) if total % d == 0 and d != b])
    ans = total // c
    q = f"A school orders {b} boxes of crayons with {p} crayons in each box. The crayons are shared equally among {c} classes. How many crayons does each class get?"
    steps = [f"Total crayons: {b} * {p} = {total}.", f"Each class gets {total} / {c} = {ans} crayons."]
    return q, ans, steps, [total, ans + c, total - c], "crayons", False


def _g_reading(r: random.Random) -> MathSpec:
    name, p, days = r.choice(NAMES), r.randint(8, 40), r.randint(5, 30)
    total = p * days
    q = f"{name} reads {p} pages every day. The book has {total} pages. How many days will it take {name} to finish the book?"
    return q, days, [f"Days needed: {total} / {p} = {days}."], [days + 1, total - p, days - 2], "days", False


def _g_tickets(r: random.Random) -> MathSpec:
    a = r.randint(8, 25)
    c, na, nc = r.randint(4, a - 1), r.randint(1, 4), r.randint(1, 5)
    ans = a * na + c * nc
    q = f"Museum tickets cost ${a} for adults and ${c} for children. A family buys {na} adult tickets and {nc} child tickets. How much do they pay in total?"
    steps = [
        f"Adults: {na} * {a} = ${a * na}.",
        f"Children: {nc} * {c} = ${c * nc}.",
        f"Total: {a * na} + {c * nc} = ${ans}.",
    ]
    return q, ans, steps, [a + c, (a + c) * (na + nc), a * na], "dollars", True


GSM8K_TEMPLATES: tuple[Callable[[random.Random], MathSpec], ...] = (
    _g_packs, _g_bakery, _g_wage, _g_train, _g_change, _g_percent,
    _g_recipe, _g_times, _g_fence, _g_share, _g_reading, _g_tickets,
)  # fmt: skip

# --------------------------------------------------------------------------------------------- MATH templates
# Each returns (question, answer, steps, wrong answers).

MathTex = tuple[str, MathAnswer, list[str], list[MathAnswer]]


def _m_fraction(r: random.Random) -> MathTex:
    q = r.choice((3, 4, 5, 6, 7, 8, 9, 10, 12, 16, 20, 25))
    p = r.choice([n for n in range(1, q) if math.gcd(n, q) == 1])
    k = r.randint(2, 9)
    f = Fraction(p, q)
    text = f"Simplify $\\frac{{{p * k}}}{{{q * k}}}$."
    steps = [
        f"The greatest common divisor of {p * k} and {q * k} is {k}.",
        f"Dividing both by {k} gives $\\frac{{{p}}}{{{q}}}$.",
    ]
    return text, _frac_answer(f), steps, [_frac_answer(Fraction(q, p)), _frac_answer(Fraction(p + 1, q))]


def _m_linear(r: random.Random) -> MathTex:
    den = r.choice((1, 1, 2, 3))
    a = den * r.randint(1, 4) + (1 if den == 1 else 0)
    x = Fraction(r.randint(-15, 15), den)
    b = r.randint(-20, 20)
    c = int(a * x + b)
    text = f"Solve for $x$: ${a}x {_signed(b)} = {c}$."
    steps = [f"Subtract {b} from both sides: ${a}x = {c - b}$.", f"Divide by {a}: $x = {_frac_tex(x)}$."]
    wrong = [
        _frac_answer(Fraction(c + b, a)),
        _frac_answer(-x if x else x + 1),
        _frac_answer(Fraction(c - b, a) + 1),
    ]
    return text, _frac_answer(x), steps, wrong


def _m_roots(r: random.Random) -> MathTex:
    r1, r2 = r.sample([v for v in range(-9, 10) if v], 2)
    s, p = r1 + r2, r1 * r2
    text = f"What is the sum of all values of $x$ that satisfy ${_poly([1, -s, p])} = 0$?"
    f1 = f"(x {_signed(-r1)})(x {_signed(-r2)})"
    steps = [f"Factor: ${f1} = 0$.", f"The solutions are $x = {r1}$ and $x = {r2}$, so their sum is ${s}$."]
    return text, _int_answer(s), steps, [_int_answer(p), _int_answer(-s), _int_answer(r1)]


def _m_sqrt(r: random.Random) -> MathTex:
    m, k = r.choice((2, 3, 5, 6, 7, 10, 11, 13)), r.randint(2, 9)
    n = k * k * m
    text = f"Simplify $\\sqrt{{{n}}}$."
    ans = f"{k}\\sqrt{{{m}}}"
    alts = [(f"{k} \\sqrt{{{m}}}",) * 2, (f"{k}\\cdot\\sqrt{{{m}}}",) * 2]
    if m < 10:
        alts.append((f"{k}\\sqrt{m}",) * 2)  # brace-less \sqrt2
    steps = [
        f"${n} = {k * k} \\cdot {m}$.",
        f"$\\sqrt{{{n}}} = \\sqrt{{{k * k}}} \\cdot \\sqrt{{{m}}} = {ans}$.",
    ]
    wrong_pairs = [(m, k), (k + 1, m), (k, m + 1)]
    wrong = [
        MathAnswer(f"{a}\\sqrt{{{b}}}", ((f"{a} \\sqrt{{{b}}}",) * 2,), a * a * b)
        for a, b in wrong_pairs
        if a * a * b != n
    ]
    return text, MathAnswer(ans, tuple(alts), n), steps, wrong


def _m_dice(r: random.Random) -> MathTex:
    s = r.choice((3, 4, 5, 6, 8, 9, 10, 11))
    ways = 6 - abs(s - 7)
    f = Fraction(ways, 36)
    text = f"Two fair six-sided dice are rolled. What is the probability that the sum of the numbers rolled is {s}? Express your answer as a common fraction."
    extra = [(f"\\frac{{{ways}}}{{36}}",) * 2] if f.denominator != 36 else []
    steps = [
        "There are $6 \\cdot 6 = 36$ equally likely outcomes.",
        f"{ways} of them have a sum of {s}, so the probability is $\\frac{{{ways}}}{{36}} = {_frac_tex(f)}$.",
    ]
    wrong = [
        _frac_answer(Fraction(ways + 1, 36)),
        _frac_answer(Fraction(ways, 12)),
        _frac_answer(Fraction(1, s)),
    ]
    return text, _frac_answer(f, extra), steps, [w for w in wrong if w.value != f]


def _interval(lo: str, hi: str, left: str, right: str) -> MathAnswer:
    text = f"{left}{lo}, {hi}{right}"
    alts = ((f"{left}{lo},{hi}{right}",) * 2, (f"\\left{left}{lo}, {hi}\\right{right}",) * 2)
    return MathAnswer(text, alts, (lo, hi, left, right))


def _m_inequality(r: random.Random) -> MathTex:
    a, r0, b = r.randint(2, 6), r.randint(-9, 9), r.randint(-12, 12)
    c = a * r0 + b
    op, less = r.choice((("<", True), ("\\le", True), (">", False), ("\\ge", False)))
    closed = op in ("\\le", "\\ge")
    text = f"Solve the inequality ${a}x {_signed(b)} {op} {c}$. Express your answer in interval notation."
    steps = [f"Subtract {b}: ${a}x {op} {c - b}$.", f"Divide by {a}: $x {op} {r0}$."]
    inf = "\\infty"
    if less:
        ans = _interval(f"-{inf}", str(r0), "(", "]" if closed else ")")
        wrong = [
            _interval(f"-{inf}", str(r0), "(", ")" if closed else "]"),
            _interval(str(r0), inf, "(", ")"),
        ]
    else:
        ans = _interval(str(r0), inf, "[" if closed else "(", ")")
        wrong = [
            _interval(str(r0), inf, "(" if closed else "[", ")"),
            _interval(f"-{inf}", str(r0), "(", ")"),
        ]
    return text, ans, steps, wrong


def _m_square(r: random.Random) -> MathTex:
    r0 = r.randint(2, 15)
    text = f"Find all real solutions of $x^2 = {r0 * r0}$. Enter all the solutions, separated by commas."
    ans = MathAnswer(f"-{r0}, {r0}", ((f"{r0}, -{r0}",) * 2, (f"-{r0},{r0}",) * 2), frozenset((-r0, r0)))
    steps = [f"Take square roots of both sides: $x = \\pm\\sqrt{{{r0 * r0}}} = \\pm {r0}$."]
    wrong = [_int_answer(r0), MathAnswer(f"-{2 * r0}, {2 * r0}", (), frozenset((-2 * r0, 2 * r0)))]
    return text, ans, steps, wrong


def _m_evaluate(r: random.Random) -> MathTex:
    a, b, c, t = r.randint(1, 5), r.randint(-6, 6), r.randint(-9, 9), r.choice([v for v in range(-4, 5) if v])
    ans = a * t * t + b * t + c
    text = f"If $f(x) = {_poly([a, b, c])}$, what is the value of $f({t})$?"
    steps = [
        f"$f({t}) = {a}({t})^2 {_signed(b)}({t}) {_signed(c)}$.",
        f"$= {a * t * t} {_signed(b * t)} {_signed(c)} = {ans}$.",
    ]
    wrong = [_int_answer(v) for v in {ans + a, a * t + b * t + c, ans - 2 * b * t, ans + 1} if v != ans]
    return text, _int_answer(ans), steps, sorted(wrong, key=lambda w: w.text)


def _m_gcd(r: random.Random) -> MathTex:
    g = r.randint(2, 30)
    u, v = r.sample([n for n in range(2, 16)], 2)
    while math.gcd(u, v) != 1:
        u, v = r.sample([n for n in range(2, 16)], 2)
    a, b = g * u, g * v
    text = f"What is the greatest common divisor of {a} and {b}?"
    steps = [
        f"${a} = {g} \\cdot {u}$ and ${b} = {g} \\cdot {v}$, and {u} and {v} share no common factor.",
        f"So the greatest common divisor is ${g}$.",
    ]
    return (
        text,
        _int_answer(g),
        steps,
        [_int_answer(g * u * v), _int_answer(2 * g), _int_answer(abs(a - b) + g)],
    )


def _m_series(r: random.Random) -> MathTex:
    n = r.randint(20, 90)
    ans = n * (n + 1) // 2
    text = f"What is the sum of all the integers from 1 to {n}, inclusive?"
    steps = [
        f"Use the formula $\\frac{{n(n+1)}}{{2}}$ with $n = {n}$.",
        f"$\\frac{{{n} \\cdot {n + 1}}}{{2}} = {ans}$.",
    ]
    return (
        text,
        _int_answer(ans),
        steps,
        [_int_answer(n * (n - 1) // 2), _int_answer(n * (n + 1)), _int_answer(n * n)],
    )


def _m_slope(r: random.Random) -> MathTex:
    x1, y1 = r.randint(-6, 6), r.randint(-6, 6)
    dx, dy = r.choice((2, 3, 4, 5, 6, 8)), r.choice([v for v in range(-9, 10) if v])
    x2, y2 = x1 + dx, y1 + dy
    m = Fraction(dy, dx)
    text = f"What is the slope of the line passing through $({x1}, {y1})$ and $({x2}, {y2})$? Express your answer as a common fraction."
    steps = [
        f"Slope $= \\frac{{{y2} - ({y1})}}{{{x2} - ({x1})}} = \\frac{{{dy}}}{{{dx}}}$.",
        f"This simplifies to ${_frac_tex(m)}$.",
    ]
    wrong = [_frac_answer(-m), _frac_answer(Fraction(dx, dy)), _frac_answer(m + 1)]
    return text, _frac_answer(m), steps, [w for w in wrong if w.value != m]


def _pair(a: int, b: int) -> MathAnswer:
    return MathAnswer(f"({a}, {b})", ((f"({a},{b})",) * 2, (f"\\left({a}, {b}\\right)",) * 2), (a, b))


def _m_midpoint(r: random.Random) -> MathTex:
    mx, my = r.randint(-8, 8), r.randint(-8, 8)
    hx, hy = r.randint(1, 7), r.choice([v for v in range(-7, 8) if v])
    a, b, c, d = mx - hx, my - hy, mx + hx, my + hy
    text = f"What is the midpoint of the segment with endpoints $({a}, {b})$ and $({c}, {d})$?"
    steps = [
        f"Midpoint $= \\left(\\frac{{{a} + {c}}}{{2}}, \\frac{{{b} + ({d})}}{{2}}\\right) = ({mx}, {my})$."
    ]
    wrong = [_pair(my, mx), _pair(hx, hy), _pair(mx + 1, my)]
    return text, _pair(mx, my), steps, [w for w in wrong if w.value != (mx, my)]


MATH_TEMPLATES: tuple[Callable[[random.Random], MathTex], ...] = (
    _m_fraction, _m_linear, _m_roots, _m_sqrt, _m_dice, _m_inequality,
    _m_square, _m_evaluate, _m_gcd, _m_series, _m_slope, _m_midpoint,
)  # fmt: skip


def _math_questions(task: TaskSpec, n: int, seed: int, rep: int = 0) -> list[Question]:
    templates = GSM8K_TEMPLATES if task.name == "GSM8K" else MATH_TEMPLATES
    out: list[Question] = []
    seen: set[str] = set()
    i = 0
    while len(out) < n:
        tag = f"r{rep}-" if rep else ""
        qid = f"{task.slug}-{tag}{len(out):03d}"
        r = _rng(seed, rep, task.slug, i)
        template = templates[len(out) % len(templates)]
        i += 1
        if task.name == "GSM8K":
            text, v, steps, wrong_v, unit, money = template(r)  # type: ignore[misc]
            answer = _int_answer(v, money)
            wrong = [_int_answer(w, money) for w in dict.fromkeys(wrong_v) if w != v and w >= 0]
        else:
            text, answer, steps, wrong = template(r)  # type: ignore[misc]
            unit, money = "", False
        # A "wrong" answer that happens to equal the right one (e.g. b = 0) would make the gold judgment lie.
        wrong = list({w.text: w for w in wrong if w.value != answer.value}.values())
        if text in seen or not wrong:
            continue  # the same numbers drawn twice: draw again, so every question is distinct
        seen.add(text)
        correct = answer.text
        if isinstance(answer.value, Fraction) and answer.value.denominator > 1:
            # Benchmarks store some fractional answers as decimals (0.5) while models write \frac{1}{2}.
            dec = _terminating_decimal(answer.value)
            if dec is not None and r.random() < 0.6:
                correct = dec
        out.append(
            Question(
                qid=qid,
                task=task,
                text=text,
                answer_range=MATH_ANSWER_RANGE,
                correct=correct,
                difficulty=_difficulty(seed, qid),
                answer=answer,
                wrong=tuple(wrong),
                steps=tuple(steps),
                unit=unit,
                money=money,
            )
        )
    return out


def build_questions(task: str | TaskSpec, n: int, seed: int = 0, rep: int = 0) -> list[Question]:
    """The first `n` questions of a task (deterministic for a seed); every model answers the same ones."""
    spec = TASKS_BY_NAME[task] if isinstance(task, str) else task
    if n > BANK_SIZES[spec.name]:
        raise ValueError(f"{spec.name} has {BANK_SIZES[spec.name]} questions; asked for {n}")
    if spec.key_answer_type == "math":
        return _math_questions(spec, n, seed, rep)
    return _bank_questions(spec, n, seed)


# --------------------------------------------------------------------------------------------- response text pools

REFUSALS = (
    "I'm sorry, but I can't help with that request.",
    "As an AI language model, I am not able to answer this question. Please consult a reliable source.",
    "I apologize, but I cannot provide an answer to this question, as it could be misleading or inaccurate.",
    "I'm not comfortable answering this. Is there something else I can help you with?",
    "抱歉，我无法回答这个问题。",
)
IRRELEVANT = (
    "Hello! How can I assist you today?",
    "Here is a short poem about the sea:\nWaves roll in and out,\ngulls circle overhead,\nsalt on every breeze.",
    "Thank you for your question! Learning is a lifelong journey, and curiosity is always the first step.",
    "The weather today is sunny with a light breeze, perfect for a walk in the park.",
    "Sure! Let me know if you have any other questions about programming in Python.",
    "Q: What is your favorite color?\nA: As an AI, I do not have personal preferences.",
)
EMPTY = ("", "", " ", "\n")
# Kinds whose text does not depend on the question: one pool each, for every key_answer_type.
QUESTION_FREE = {"refusal": REFUSALS, "irrelevant": IRRELEVANT, "empty": EMPTY}
# Few-shot style turns a looping model keeps generating after its answer: (question block, answer).
LOOP_TURNS: dict[str, tuple[tuple[str, str], ...]] = {
    "alphabet_option": (
        ("How many legs does an insect have?\nAnswer Choices: (A) four (B) six (C) eight (D) ten", "B"),
        ("Which gas do humans breathe out?\nAnswer Choices: (A) hydrogen (B) helium (C) carbon dioxide (D) neon", "C"),
        ("Which ocean lies between Africa and Australia?\nAnswer Choices: (A) Indian (B) Arctic (C) Atlantic (D) Southern", "A"),
        ("Which animal builds dams across streams?\nAnswer Choices: (A) otter (B) heron (C) trout (D) beaver", "D"),
        ("How many sides does a hexagon have?\nAnswer Choices: (A) five (B) six (C) seven (D) eight", "B"),
    ),
    "CommonsenseQA_text": (
        ("Where do you keep frozen food?\nAnswer Choices: freezer / oven / closet / car", "freezer"),
        ("What do you wear to protect your eyes from bright sun?\nAnswer Choices: sunglasses / socks / gloves / scarf", "sunglasses"),
        ("What do people do at a birthday party?\nAnswer Choices: celebrate / mourn / study / sleep", "celebrate"),
        ("Where would you go to see a doctor?\nAnswer Choices: clinic / bakery / cinema / beach", "clinic"),
    ),
    "BoolQ": (
        ("Passage: The Sun is a star at the center of the Solar System.\nQuestion: is the sun a star?", "True"),
        ("Passage: Whales are mammals that breathe air through blowholes.\nQuestion: do whales breathe water?", "False"),
        ("Passage: Paris is the capital of France.\nQuestion: is paris the capital of france?", "True"),
    ),
    "AgNews": (
        ("Title: Striker scores twice in derby win", "Sports"),
        ("Title: Tech giant reports higher cloud revenue", "Business"),
        ("Title: Foreign ministers meet to discuss trade pact", "World"),
        ("Title: New vaccine enters final stage of trials", "Sci/Tech"),
    ),
    "SST-2": (
        ("Review: a dull and lifeless film .", "negative"),
        ("Review: a delightful surprise from start to finish .", "positive"),
        ("Review: the acting is wooden and the plot is thin .", "negative"),
    ),
    "GSM8K": (
        ("A box holds 12 eggs. How many eggs are in 5 boxes?", "12 * 5 = 60. The answer is 60."),
        ("A bike costs $120 and is on sale for $25 off. What is the sale price?", "120 - 25 = 95. The answer is 95."),
        ("A bus carries 45 people on each trip. How many people does it carry in 4 trips?", "45 * 4 = 180. The answer is 180."),
        ("Sam has 30 coins and spends 12. How many coins are left?", "30 - 12 = 18. The answer is 18."),
    ),
    "MATH": (
        ("What is $3^4$?", "$3^4 = 81$. The answer is 81."),
        ("Simplify $\\frac{6}{8}$.", "Divide both by 2. The answer is $\\frac{3}{4}$."),
        ("Solve for $x$: $2x = 14$.", "$x = 7$. The answer is 7."),
        ("What is $\\sqrt{49}$?", "$\\sqrt{49} = 7$. The answer is 7."),
    ),
}  # fmt: skip

CONCLUDE = (
    "Therefore, the answer is {}.",
    "So the answer is {}.",
    "The answer is {}.",
    "Hence, the correct answer is {}.",
)

# --------------------------------------------------------------------------------------------- responses

Response = tuple[str, str, str]  # (llm_output, gold_key_answer, kind)
WRONG_STEP = ("Putting this together gives {}.", "Computing the last step gives {}.", "This works out to {}.")


def _inline(text: str) -> str:
    """LaTeX answers are written in math mode inside sentences."""
    return f"${text}$" if "\\" in text or "^" in text else text


def _text_of(q: Question, key: str) -> str:
    return q.texts[q.keys.index(key)]


def _other(q: Question, key: str, r: random.Random) -> str:
    return r.choice([k for k in q.keys if k != key])


def _cap(s: str) -> str:
    return s[:1].upper() + s[1:]


def _reason(q: Question, key: str, r: random.Random) -> str:
    """A task-flavoured sentence or two of reasoning that leads to `key` (right or wrong alike)."""
    t = _text_of(q, key)
    name = q.task.name
    if name in ("MMLU", "ARC-Challenge"):
        o = _other(q, key, r)
        return r.choice(
            (
                f"Let's think step by step. The question asks: {q.context} Looking at the options, ({key}) {t} is the "
                "one that fits; the others do not match what is being asked.",
                f"We need to recall the relevant fact. Option ({o}) {_text_of(q, o)} does not fit, while {t} matches the "
                "question.",
                f"The key idea here is {t}. The other choices describe something different.",
            )
        )
    if name == "CommonsenseQA_text":
        return r.choice(
            (
                f'The question is "{q.context}" Among the choices, "{t}" is the most sensible, because the others do '
                "not fit the situation.",
                f'Thinking about everyday experience, "{t}" is what people would expect here.',
            )
        )
    if name == "BoolQ":
        return r.choice(
            (
                f'The passage says: "{q.context}" Based on this, the statement in the question is {t}.',
                f"Let me check the passage against the question. It indicates that the answer should be {t}.",
            )
        )
    if name == "AgNews":
        topic = {"World": "international affairs", "Sports": "a sporting event", "Business": "companies and the economy",
                 "Sci/Tech": "science and technology"}[t]  # fmt: skip
        return f'The headline "{q.context}" is about {topic}, so this is a {t} story.'
    tone = "approving" if t == "positive" else "critical"
    return f'The review says "{q.context}" The wording is {tone} overall, so the sentiment is {t}.'


def _choice_response(q: Question, kind: str, key: str, r: random.Random) -> Response:
    """Render a response of `kind` to a non-math question whose intended answer is `key`."""
    alpha = q.task.key_answer_type == "alphabet_option"
    t = _text_of(q, key)
    o = _other(q, key, r)
    to = _text_of(q, o)
    say = key if alpha else t  # how the answer is named in plain sentences
    sayo = o if alpha else to
    if kind == "direct":
        if alpha:
            out = r.choice((key, f"({key})", f"{key}.", f"Answer: {key}", f"{key}. {t}", f"({key}) {t}"))
        else:
            out = r.choice((t, f"Answer: {t}", f"{t}.", _cap(t)))
    elif kind == "answer_is":
        if alpha:
            out = r.choice((f"The answer is {key}.", f"The correct answer is ({key}) {t}.", f"The answer is option {key}.",
                            f"Correct option: {key}"))  # fmt: skip
        else:
            out = r.choice((f"The answer is {t}.", f'The correct answer is "{t}".', f"My answer: {_cap(t)}"))
    elif kind == "cot":
        final = r.choice((say, f"({key}) {t}")) if alpha else t
        out = f"{_reason(q, key, r)}\n\n{r.choice(CONCLUDE).format(final)}"
    elif kind == "markdown":
        if alpha:
            out = r.choice((f"**{key}**", f"**Answer:** {key}", f"The correct answer is **({key}) {t}**.",
                            f"### Reasoning\n{_reason(q, key, r)}\n\n### Answer\n**{key}. {t}**"))  # fmt: skip
        else:
            out = r.choice((f"**{t}**", f"**Answer:** {t}", f"### Reasoning\n{_reason(q, key, r)}\n\n### Answer\n**{t}**",
                            f"The answer is **{t}**."))  # fmt: skip
    elif kind == "boxed":
        out = r.choice((f"{_reason(q, key, r)}\n\nThe answer is $\\boxed{{{key}}}$.", f"$\\boxed{{{key}}}$"))
    elif kind == "option_text":  # only the option's text: the key answer is still its letter
        out = r.choice((f'I believe the best answer is "{t}".', t,
                        f"The correct answer is: {t}\n\nThe other choices do not fit the question as well."))  # fmt: skip
    elif kind == "correction":
        out = r.choice(
            (
                f'The answer is {sayo}. Wait, actually, let me re-read the question. "{to}" does not fit as well as '
                f'"{t}". So the correct answer is {say}.',
                f"My first thought was {sayo}. On reflection that is wrong: {t} is the better fit.\n\nFinal answer: {say}",
                f"Initial answer: {sayo}\n\nLet me double-check this. {_reason(q, key, r)}\n\nCorrected answer: {say}",
            )
        )
    elif kind == "negation_trap":
        if alpha:
            rest = [k for k in q.keys if k != key]
            out = r.choice(
                (
                    f"({o}) {to} is incorrect, so the answer is ({key}) {t}.",
                    f"It is not {o}. {_cap(t)} is the right choice here, so the answer is {key}.",
                    "Let's rule out the wrong options.\n"
                    + "\n".join(f"({k}) {_text_of(q, k)} is incorrect." for k in rest)
                    + f"\nThat leaves ({key}) {t}, which must be the answer.",
                )
            )
        else:
            out = r.choice((f"It is not {to}. The answer is {t}.", f'"{to}" is incorrect, so the correct answer is "{t}".',
                            f"Not {to}. {_cap(t)}."))  # fmt: skip
    elif kind == "multilingual":
        if alpha:
            out = r.choice(
                (
                    f"让我们逐一分析选项。\n{t} 最符合题意。\n答案是 {key}。",
                    f"答案：{key}",
                    f"正确答案是（{key}）{t}。",
                )
            )
        else:
            out = r.choice(
                (
                    f"根据题意，答案是 {t}。",
                    f"我们来分析一下。{_reason(q, key, r)}\n所以答案是：{t}",
                    f"答案：{t}",
                )
            )
    elif kind == "repetition_loop":
        pool = LOOP_TURNS["alphabet_option" if alpha else q.task.name]
        first = r.choice((f"Answer: {say}", f"The answer is {say}."))
        turns = r.sample(pool, k=min(len(pool), r.randint(2, 3)))
        out = first + "".join(f"\n\nQ: {tq}\nA: {ta}" for tq, ta in turns)
        if r.random() < 0.5:
            out += f"\n\nQ: {r.choice(pool)[0][: r.randint(8, 30)]}"  # cut off mid-turn at the token limit
    elif kind == "fluctuation":
        a, b = r.sample([say, sayo], 2)
        out = r.choice(
            (
                f"It could be {a}, but {b} also seems plausible. I can't decide between them.",
                f"I think the answer is {a}.\nHowever, it might also be {b}.\nIt is hard to choose between {a} and {b}.",
                f"{a}... or {b}? Both seem reasonable depending on how the question is read.",
            )
        )
    elif kind == "all_options":
        if alpha:
            out = "\n".join(f"({k}) {v}" for k, v in zip(q.keys, q.texts, strict=True))
        else:
            out = f"The answer is {', '.join(q.texts[:-1])} or {q.texts[-1]}."
    elif kind == "not_in_range":
        off = r.choice(q.off_range)
        out = r.choice(
            (f"The answer is {off}.", f"I think the best answer is {off}, even though it is not listed.")
        )
        if alpha and r.random() < 0.4:
            out = "None of the given options is correct."
    elif kind == "truncated":
        if alpha:
            out = r.choice((f"Let's analyze each option one by one.\n\n(A) {q.texts[0]}: this option",
                            "To answer this question, we first need to understand",
                            "Let me think about this carefully. The question asks about"))  # fmt: skip
        else:
            out = r.choice(("First, let me restate the question in my own words. It is about",
                            f'Step 1: consider what "{q.texts[0]}" would mean here.\nStep 2: compare it with',
                            "Let's look at the key words in the text. The most important"))  # fmt: skip
    elif kind in QUESTION_FREE:
        out = r.choice(QUESTION_FREE[kind])
    else:
        raise ValueError(f"kind {kind!r} does not apply to {q.task.key_answer_type}")
    gold = NO_VALID_ANSWER if kind in NO_ANSWER_KINDS else key
    return out, gold, kind


# Same branch layout as _choice_response above: one list of kinds, but templates of their own (sample-data
# text for math, with steps and a numeric answer), so each renders its kinds itself.
def _math_response(q: Question, kind: str, ans: MathAnswer, right: bool, r: random.Random) -> Response:
    """Render a response of `kind` to a math question whose intended final answer is `ans`."""
    assert q.answer is not None
    # A wrong answer comes from a slip in the last step: the earlier steps are right, the result is not.
    steps = list(q.steps) if right else [*q.steps[:-1], r.choice(WRONG_STEP).format(_inline(ans.text))]
    body = "\n".join(steps)
    other = r.choice([w for w in (q.answer, *q.wrong) if w is not ans])
    shown, gold = ans.text, ans.text
    if kind == "equiv_format" and ans.alts:
        # alts[0] is the most telling variant (1,000 for 1000; 0.5 for \frac{1}{2}): favour it.
        shown, gold = ans.alts[0] if r.random() < 0.5 else r.choice(ans.alts)
    elif isinstance(ans.value, Fraction) and ans.value.denominator == 1 and abs(ans.value) >= 1000:
        if r.random() < 0.35:  # many models write big numbers with thousands separators anyway
            shown, gold = ans.alts[0]
    latex = "\\" in shown or "^" in shown
    inline = _inline(shown)
    unit = f" {q.unit}" if q.unit and not latex and r.random() < 0.3 else ""  # "22 cookies": key answer 22
    money = q.money and not latex and not shown.startswith("$") and r.random() < 0.5
    if money or shown.startswith("$"):
        unit = ""  # "$40", not "$40 dollars"
    said = f"${shown}" if money else inline  # "$1,250": the currency sign is not part of the key answer
    if kind in ("direct", "equiv_format") and r.random() < (0.5 if kind == "direct" else 0.3):
        out = r.choice((said, f"Answer: {said}"))
    elif kind in ("answer_is", "equiv_format"):
        out = r.choice((f"The answer is {said}{unit}.", f"{body}\nThe final answer is {said}{unit}.",
                        f"{body}\nSo the answer is {said}{unit}."))  # fmt: skip
    elif kind == "direct":
        out = f"{body}\n{said}" if body else said
    elif kind == "cot":
        out = f"Let's think step by step.\n{body}\n{r.choice(CONCLUDE).format(said + unit)}"
    elif kind == "boxed":
        out = r.choice((f"{body}\n\nThe final answer is $\\boxed{{{shown}}}$.",
                        f"{body.replace(chr(10), ' ')} Thus, the answer is $\\boxed{{{shown}}}$. I hope it is correct."))  # fmt: skip
    elif kind == "hash":
        out = f"{body}\n#### {shown}"
    elif kind == "markdown":
        lines = "\n".join(f"- {s}" for s in steps)
        out = r.choice(
            (
                f"## Solution\n\n{lines}\n\n**Answer: {shown}**",
                f"### Steps\n{lines}\n\n## Final Answer\n\nThe answer is **{shown}**.",
            )
        )
    elif kind == "correction":
        if right:  # a slip first, then the redo reaches the right answer
            first = "\n".join(q.steps[:-1])
            out = (
                f"{first}\nSo the answer is {_inline(other.text)}.\n\nWait, I made a mistake. Let me redo it:\n"
                f"{body}\nThe correct answer is {inline}."
            )
        else:  # talked out of the right answer
            out = (
                f"{chr(10).join(q.steps)}\nSo the answer is {_inline(q.answer.text)}.\n\nHmm, let me check that "
                f"again.\n{body}\nActually, the final answer should be {inline}."
            )
    elif kind == "negation_trap":
        out = f"It is tempting to answer {_inline(other.text)}, but that is incorrect.\n{body}\nThe answer is {inline}."
    elif kind == "multilingual":
        out = r.choice(
            (f"解：\n{body}\n所以答案是 {inline}。", f"我们一步一步来。\n{body}\n因此，答案是 {inline}。")
        )
    elif kind == "repetition_loop":
        pool = LOOP_TURNS[q.task.name]
        turns = r.sample(pool, k=min(len(pool), r.randint(2, 3)))
        out = f"{body}\nThe answer is {inline}." + "".join(f"\n\nQ: {tq}\nA: {ta}" for tq, ta in turns)
    elif kind == "fluctuation":
        a, b = r.sample([_inline(ans.text), _inline(other.text)], 2)
        out = r.choice((f"I get {a}, but computing it another way gives {b}. I'm not sure which one is right.",
                        f"Depending on how the problem is read, it is either {a} or {b}; both seem possible."))  # fmt: skip
    elif kind == "truncated":
        k = r.randint(0, max(0, len(q.steps) - 1))
        cut = q.steps[k] if k < len(q.steps) else "Now we"
        partial = cut[: max(6, len(cut) // 2)].rsplit(" ", 1)[0]  # cut mid-step, before its result
        out = "Let's think step by step.\n" + "\n".join([*q.steps[:k], partial])
    elif kind in QUESTION_FREE:
        out = r.choice(QUESTION_FREE[kind])
    else:
        raise ValueError(f"kind {kind!r} does not apply to math")
    return out.strip("\n"), NO_VALID_ANSWER if kind in NO_ANSWER_KINDS else gold, kind


def _kind_weights(model: ModelProfile, key_answer_type: str) -> tuple[list[str], list[float]]:
    base = KIND_WEIGHTS[key_answer_type]
    kinds = sorted(base)
    return kinds, [base[k] * model.style.get(k, 1.0) for k in kinds]


def respond(model: ModelProfile, q: Question, seed: int = 0, rep: int = 0) -> dict[str, Any]:
    """One model's response to one question, with its gold annotation (a full sample row, no defect)."""
    r = _rng(seed, rep, "respond", model.name, q.qid)
    p_correct = 1.0 / (1.0 + math.exp(-(model.skill - q.difficulty - q.task.offset)))
    right = r.random() < p_correct
    kinds, weights = _kind_weights(model, q.task.key_answer_type)
    kind = r.choices(kinds, weights)[0]
    if q.task.key_answer_type == "math":
        assert q.answer is not None
        ans = q.answer if right else r.choice(q.wrong)
        out, gold, kind = _math_response(q, kind, ans, right, r)
        judgment = right and gold != NO_VALID_ANSWER
    else:
        key = q.correct if right else _other(q, q.correct, r)
        out, gold, kind = _choice_response(q, kind, key, r)
        judgment = gold == q.correct
    return {
        "record_id": f"{q.qid}-{model.name}",
        "model": model.name,
        "task": q.task.name,
        "key_answer_type": q.task.key_answer_type,
        "question": q.text,
        "llm_output": out,
        "standard_answer_range": (
            q.answer_range
            if isinstance(q.answer_range, str)
            else json.dumps(q.answer_range, ensure_ascii=False)
        ),
        "correct_answer": q.correct,
        "question_id": q.qid,
        "response_kind": kind,
        "gold_key_answer": gold,
        "gold_judgment": bool(judgment),
        "defect": None,
    }


# --------------------------------------------------------------------------------------------- invalid records


def _corrupt(row: dict[str, Any], defect: str, serial: int, r: random.Random) -> dict[str, Any]:
    """A copy of a valid row with one deliberate defect that records.check must reject."""
    bad = dict(
        row, record_id=f"bad-{serial:03d}-{row['record_id']}", gold_key_answer=None, gold_judgment=None
    )
    bad["defect"] = defect
    if defect == "null_question":
        bad["question"] = None
    elif defect == "unknown_key_answer_type":
        bad["key_answer_type"] = r.choice(("multiple_choice", "free_form", "numeric", "yes_no"))
    elif defect == "unparseable_range":
        rng_text = row["standard_answer_range"]
        items = json.loads(rng_text)
        # Either a list cut off mid-way (a truncated export) or a hand-written "a | b" that is not a list literal.
        bad["standard_answer_range"] = (
            rng_text[: max(3, len(rng_text) // 2)]
            if r.random() < 0.5
            else " | ".join(f"{x[0]}) {x[1]}" if isinstance(x, list) else x for x in items)
        )
    elif defect == "correct_not_in_range":
        task = TASKS_BY_NAME[row["task"]]
        if task.key_answer_type == "alphabet_option":
            bad["correct_answer"] = "ABCDEFGH"[len(json.loads(row["standard_answer_range"]))]
        elif task.name == "CommonsenseQA_text":
            bad["correct_answer"] = next(off for q, c, d, off in CSQA_BANK if row["question"].startswith(q))
        else:
            bad["correct_answer"] = r.choice(OFF_RANGE[task.name])
    else:
        raise ValueError(defect)
    return bad


def _with_defects(rows: list[dict[str, Any]], n_bad: int, seed: int, rep: int = 0) -> list[dict[str, Any]]:
    """Insert `n_bad` invalid copies, each right after the valid row it was made from (defects cycle)."""
    if n_bad <= 0:
        return rows
    r = _rng(seed, rep, "defects")
    non_math = [i for i, row in enumerate(rows) if row["key_answer_type"] != "math"]
    picks: dict[int, list[dict[str, Any]]] = {}
    used: set[int] = set()
    for serial in range(n_bad):
        defect = DEFECTS[serial % len(DEFECTS)]
        candidates = non_math if defect in ("unparseable_range", "correct_not_in_range") else range(len(rows))
        i = r.choice([c for c in candidates if c not in used] or list(candidates))
        used.add(i)
        picks.setdefault(i, []).append(_corrupt(rows[i], defect, serial, r))
    out: list[dict[str, Any]] = []
    for i, row in enumerate(rows):
        out.append(row)
        out.extend(picks.get(i, ()))
    return out


# --------------------------------------------------------------------------------------------- public API


def _valid_rows(
    n: int, seed: int, models: Sequence[ModelProfile], tasks: Sequence[TaskSpec], rep: int
) -> list[dict]:
    questions = {t.name: build_questions(t, n, seed, rep) for t in tasks}
    # Ordered as evaluation dumps usually are: one block per model, then per task.
    return [respond(m, q, seed, rep) for m in models for t in tasks for q in questions[t.name]]


def generate(
    n_questions_per_task: int = DEFAULT_QUESTIONS_PER_TASK,
    seed: int = 0,
    *,
    models: Sequence[ModelProfile] = MODELS,
    tasks: Sequence[TaskSpec] = TASKS,
    bad_fraction: float = BAD_FRACTION,
) -> list[dict[str, Any]]:
    """The sample as a list of row dicts: every model × task × question, plus ~`bad_fraction` invalid rows.

    Deterministic for its arguments. Rows carry the canonical fields plus question_id, response_kind,
    gold_key_answer, gold_judgment (None for invalid rows) and defect (None for valid rows).
    """
    rows = _valid_rows(n_questions_per_task, seed, models, tasks, rep=0)
    n_bad = max(len(DEFECTS), round(bad_fraction * len(rows))) if bad_fraction > 0 else 0
    return _with_defects(rows, n_bad, seed)


def to_table(rows: Sequence[dict[str, Any]]) -> pa.Table:
    """Rows (as from `generate`) to an Arrow table with SCHEMA's column order and types."""
    return pa.Table.from_pylist(list(rows), schema=SCHEMA)


def write_sample(
    path: str | Path = SAMPLE_PATH, n_questions_per_task: int = DEFAULT_QUESTIONS_PER_TASK, seed: int = 0
) -> Path:
    """Generate the sample and write it as one zstd-compressed Parquet file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(to_table(generate(n_questions_per_task, seed)), path, compression="zstd")
    return path


def read_sample(path: str | Path = SAMPLE_PATH) -> list[dict[str, Any]]:
    """The shipped sample as row dicts."""
    return pq.read_table(path).to_pylist()


@functools.lru_cache(maxsize=4)
def _pool(pool_size: int, seed: int, bad_fraction: float) -> pa.Table:
    """Distinct rows to resample from: repeated passes over the banks with fresh responses (and new math)."""
    n = max_questions_per_task()
    rows: list[dict[str, Any]] = []
    rep = 0
    while len(rows) < pool_size:
        part = _valid_rows(n, seed, MODELS, TASKS, rep)
        n_bad = round(bad_fraction * len(part))
        rows.extend(_with_defects(part, n_bad, seed, rep))
        rep += 1
    return to_table(rows[:pool_size])


def iter_synthetic_tables(
    n_rows: int,
    rows_per_table: int = 100_000,
    seed: int = 0,
    *,
    pool_size: int = 20_000,
    bad_fraction: float = BAD_FRACTION,
) -> Iterator[pa.Table]:
    """Big synthetic inputs, `rows_per_table` rows at a time, with unique record ids `syn<seed>-<n>`.

    Rows are drawn uniformly (with replacement) from a pool of `pool_size` sample-style rows, so at most
    `pool_size` distinct (question, llm_output) pairs occur; about `bad_fraction` of rows are invalid.
    Deterministic for its arguments; memory is one table at a time.
    """
    if rows_per_table <= 0:
        raise ValueError("rows_per_table must be positive")
    pool = _pool(pool_size, seed, bad_fraction)
    k = len(pool)
    r = _rng(seed, "synthetic", pool_size)
    done = 0
    while done < n_rows:
        m = min(rows_per_table, n_rows - done)
        take = pa.array([int(k * r.random()) for _ in range(m)], pa.int64())
        table = pool.take(take)
        ids = pa.array([f"syn{seed}-{i:09d}" for i in range(done, done + m)], pa.string())
        yield table.set_column(0, SCHEMA.field("record_id"), ids)
        done += m


def synthesize(n: int, seed: int = 0, **kwargs: Any) -> pa.Table:
    """`n` synthetic rows as one table (see iter_synthetic_tables for the keyword arguments)."""
    tables = list(iter_synthetic_tables(n, seed=seed, **kwargs))
    return pa.concat_tables(tables) if tables else SCHEMA.empty_table()


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m xfinder_ray.sample_data", description=__doc__.split("\n\n")[0]
    )
    p.add_argument("--out", default=str(SAMPLE_PATH), help="Parquet file (or directory with --rows)")
    p.add_argument("--questions-per-task", type=int, default=DEFAULT_QUESTIONS_PER_TASK)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--rows", type=int, help="write this many synthetic rows as part-NNNNN.parquet files instead"
    )
    p.add_argument("--rows-per-file", type=int, default=100_000)
    a = p.parse_args(argv)
    t0 = time.perf_counter()
    if a.rows is None:
        path = write_sample(a.out, a.questions_per_task, a.seed)
        n = pq.read_metadata(path).num_rows
        print(f"wrote {n} rows to {path} ({path.stat().st_size:,} bytes) in {time.perf_counter() - t0:.2f}s")
        return 0
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    total = 0
    for i, table in enumerate(iter_synthetic_tables(a.rows, a.rows_per_file, a.seed)):
        pq.write_table(table, out / f"part-{i:05d}.parquet", compression="zstd")
        total += len(table)
    print(f"wrote {total} synthetic rows to {out} in {time.perf_counter() - t0:.2f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

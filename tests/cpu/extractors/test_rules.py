"""The `rules` extractor: hand-written cases per phenomenon (own wording, not the dev set's), bounded
time on pathological inputs, and an accuracy floor on the shared dev set."""

from __future__ import annotations

import importlib.util
import time
from pathlib import Path

import pytest

from xfinder_ray.extractors import rules
from xfinder_ray.records import NO_VALID_ANSWER as NVA
from xfinder_ray.records import parse_answer_range

CAPITALS = [("A", "Paris"), ("B", "London"), ("C", "Berlin"), ("D", "Madrid")]
Q_CAPITAL = "What is the capital of France?\nAnswer Choices: (A) Paris (B) London (C) Berlin (D) Madrid"
SPOONS = [("A", "a wooden spoon"), ("B", "a steel spoon"), ("C", "a plastic spoon"), ("D", "a paper straw")]
Q_SPOON = "Which conducts heat best?"
PLANS = ["go to the store", "stay home", "call a friend"]
Q_PLAN = "It is raining hard and Sam is tired. What will Sam do?\nAnswer Choices: go to the store / stay home / call a friend"
SIQA = ["to apologize", "to laugh at them", "to leave"]
SENTIMENT = ["positive", "negative"]
Q_SENT = "Is the sentiment of this review positive or negative?\nReview: a joyless, plodding mess."
NLI = ["entailment", "neutral", "contradiction"]
BOOL = ["True", "False"]
TOPICS = ["World", "Sports", "Business", "Sci/Tech"]
Q_MATH = "A box holds 6 rows of 7 eggs. How many eggs are in 2 boxes?"


def alpha(text: str, rng=CAPITALS, q: str = Q_CAPITAL) -> str:
    return rules.extract("alphabet_option", q, text, rng)


def short(text: str, rng=PLANS, q: str = Q_PLAN) -> str:
    return rules.extract("short_text", q, text, rng)


def label(text: str, rng=SENTIMENT, q: str = Q_SENT) -> str:
    return rules.extract("categorical_label", q, text, rng)


def math(text: str, q: str = Q_MATH) -> str:
    return rules.extract("math", q, text, parse_answer_range(None, "math"))


def test_api_and_version():
    assert isinstance(rules.RULES_VERSION, str) and rules.RULES_VERSION.startswith("rules-")
    assert rules.extract("alphabet_option", "q", "B", [("A", "x"), ("B", "y")]) == "B"


# --- alphabet_option -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        # bare and decorated letters
        ("C", "C"),
        ("(b)", "B"),
        ("[D]", "D"),
        ("Option C.", "C"),
        ("A) Paris", "A"),
        ("Answer: (c)", "C"),
        ("My pick: D", "D"),
        ("**Answer: B**", "B"),
        ("The right option is B, London.", "B"),
        ("\\boxed{A}", "A"),
        ("The answer is $\\boxed{\\text{(C)}}$.", "C"),
        ("Ｃ", "C"),  # full-width
        # option text alone maps to its letter
        ("Paris", "A"),
        ("The capital of France is Paris.", "A"),
        ("I'm going with Madrid, since it is a capital.", "D"),
        ("the third option", "C"),
        # backward statements
        ("B is correct.", "B"),
        ("Going through the list, (A) Paris is the correct answer.", "A"),
        ("Berlin is the best choice here.", "C"),
        # letter and text that contradict each other
        ("The answer is (A) Berlin.", NVA),
        # a letter outside the range
        ("Answer: E", NVA),
        # several answers at once
        ("The answer is A or B.", NVA),
        ("A, B, C, D", NVA),
        ("(A) Paris\n(B) London\n(C) Berlin\n(D) Madrid", NVA),
    ],
)
def test_alpha_formats(text, expected):
    assert alpha(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("A steel spoon.", "B"),  # a capitalised article is not the letter A
        (
            "A wooden spoon is a poor conductor, a paper straw even more so. The best conductor here is a steel spoon.",
            "B",
        ),
        ("Steel is a metal, so the correct option is a steel spoon.", "B"),
        ("(A) is wrong, (C) is wrong and (D) is wrong. So it's B.", "B"),
        ("Not A, not C, not D. Therefore B.", "B"),
        ("A is incorrect because wood insulates. The answer is B.", "B"),
        ("Neither C nor D; the answer must be B.", "B"),
        ("Many would pick C here, but that is a mistake - C is wrong. The right choice is B.", "B"),
    ],
)
def test_alpha_negation_and_text(text, expected):
    assert alpha(text, SPOONS, Q_SPOON) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        # a later answer that corrects an earlier one wins
        ("I'd say B. Hmm, no. On reflection the answer is A.", "A"),
        ("Initial answer: D\nChecking again, Madrid is in Spain.\nRevised answer: A", "A"),
        ("The answer is C.\n\nWait, Berlin is in Germany. The correct answer is actually A.", "A"),
        ("At first I leaned towards London, but I'll change my answer to Paris.", "A"),
        # a final answer followed by an unrelated remark still stands
        ("Final Answer: The final answer is A. I hope it is correct.", "A"),
        ("I'm not completely sure, but I believe the answer is A.", "A"),
    ],
)
def test_alpha_corrections(text, expected):
    assert alpha(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "It might be A, though it could also be C. I really can't decide.",
        "Either B or D could be right; both seem plausible to me.",
        "The answer is A. Or maybe D? Hard to say.",
    ],
)
def test_alpha_fluctuation(text):
    assert alpha(text) == NVA


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   \n ",
        "[No valid answer]",
        "I'm sorry, but I can't help with geography questions.",
        "As an AI language model, I do not have access to maps.",
        "Could you please clarify what you mean by capital?",
        "Let's look at each option in turn. Option A, Paris, is",  # cut off
        "Let us think about which of these cities",
        "None of the options is right; the capital is Lyon.",
        "The correct answer is Lyon.",
        "Write a short poem about autumn leaves falling in the park.",
    ],
)
def test_alpha_no_valid_answer(text):
    assert alpha(text) == NVA


def test_alpha_repetition_loop():
    text = (
        "Answer: A\n\nQuestion: What is the capital of Spain?\nAnswer Choices: (A) Rome (B) Madrid\nAnswer: B\n\n"
        "Question: What is the capital of Italy?\nAnswer Choices: (A) Rome (B) Madrid\nAnswer: A\n\nQuestion: What is"
    )
    assert alpha(text) == "A"
    qa = "A: C\n\nQ: Which city is in Spain?\nA: D\n\nQ: Which city is in the UK?\nA: B"
    assert alpha(qa) == "C"
    cot_loop = "The answer is (D) Madrid.\n\nQ: Which is in England?\nThe answer is (B) London.\n\nQ: Which"
    assert alpha(cot_loop) == "D"


def test_alpha_restated_question_is_not_a_loop():
    text = "Question: What is the capital of France?\nLet me think. France's capital is Paris.\nAnswer: A"
    assert alpha(text) == "A"


@pytest.mark.parametrize(
    "text, expected",
    [
        ("正确答案是C。", "C"),
        ("分析：巴黎是法国首都。故选A", "A"),
        ("答案：（B）", "B"),
        ("La respuesta correcta es la A.", "A"),
        ("La bonne réponse est D.", "D"),
        ("Die richtige Antwort ist A.", "A"),
        ("Ответ: A", "A"),
        ("正解は A です。", "A"),
    ],
)
def test_alpha_multilingual(text, expected):
    assert alpha(text) == expected


def test_alpha_long_cot_with_markdown():
    filler = "It helps to read every option carefully before deciding. " * 30
    text = (
        "## Approach\n\n" + filler + "\n\n**Option A - Paris:** the seat of government.\n"
        "**Option B - London:** this is the UK's capital, so it can be ruled out.\n\n"
        "### Final Answer\n\n**(A) Paris**\n\nLet me know if you have other questions!"
    )
    assert alpha(text) == "A"


# --- short_text and categorical_label --------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("stay home", "stay home"),
        ("Stay Home.", "stay home"),
        ('Best answer: "call a friend"!', "call a friend"),
        ("I'd pick stay home, it is raining.", "stay home"),
        ("They would probably just stay home and rest.", "stay home"),
        ("(B) stay home", "stay home"),
        ("- Choice: stay home\n- Why: rain and fatigue", "stay home"),
        ("Initially I thought 'call a friend', but actually the answer is 'stay home'.", "stay home"),
        ("Not 'go to the store' - rather 'stay home'.", "stay home"),
        ('"go to the store" does not fit. The answer is "stay home".', "stay home"),
        ("The answer is to read a book.", NVA),  # not a candidate
        ("The answer is stay home or call a friend.", NVA),
        ("go to the store, stay home or call a friend", NVA),
        ("It could be stay home, but call a friend is also possible; I'm not sure.", NVA),
        ("Let's consider what a tired person does on a rainy day. They", NVA),
    ],
)
def test_short_text(text, expected):
    assert short(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("The answer is apologize.", "to apologize"),
        ("They would want to leave.", "to leave"),
        ("Answer: to laugh at them", "to laugh at them"),
    ],
)
def test_short_text_infinitive_candidates(text, expected):
    assert short(text, SIQA, "How would they feel?") == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("NEGATIVE", "negative"),
        ("Sentiment: Negative", "negative"),
        ("This review is clearly negative.", "negative"),
        ("I would label this as negative because 'joyless' is harsh.", "negative"),
        ("It is not positive. The label is negative.", "negative"),
        (
            "My first guess was positive, but that's wrong: the words are harsh. Final label: negative.",
            "negative",
        ),
        ("This is neither positive nor negative.", NVA),
        ("Positive or negative? Honestly it's hard to tell, it depends on the reader.", NVA),
        ("The sentiment is mixed.", NVA),
        ("答案是 negative。", "negative"),
        ("La respuesta es negative.", "negative"),
    ],
)
def test_categorical(text, expected):
    assert label(text) == expected


def test_categorical_other_ranges():
    assert (
        label("The relationship is entailment, since the premise states it.", NLI, "premise...")
        == "entailment"
    )
    assert (
        label("Premise: a dog runs.\nHypothesis: an animal moves.\nThe answer is entailment.", NLI, "p")
        == "entailment"
    )
    assert label("false.", BOOL, "Is it?") == "False"
    assert label("Category: Sci/Tech", TOPICS, "Topic?") == "Sci/Tech"
    assert label("Politics", TOPICS, "Topic?") == NVA
    assert label("This article is about elections, so the label is Politics.", TOPICS, "Topic?") == NVA
    loop = (
        "Answer: negative\n\nReview: a delightful romp.\nAnswer: positive\n\nReview: dull.\nAnswer: negative"
    )
    assert label(loop) == "negative"
    loop2 = "Label: False\n\nSentence 1: He ran.\nSentence 2: The paint ran.\nLabel: True"
    assert label(loop2, BOOL, "Same meaning?") == "False"


# --- math -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("84", "84"),
        ("#### 84", "84"),
        ("6 * 7 = 42 eggs per box, 42 * 2 = 84.\n#### 84", "84"),
        ("The answer is 84 eggs.", "84"),
        ("Answer: 3.5 hours", "3.5"),
        ("So the final answer is 1,234.", "1,234"),
        ("The total cost is $45.50.", "45.50"),
        ("$66", "66"),
        ("The answer is 40%.", "40%"),
        ("Therefore, the answer is \\(\\frac{2}{3}\\).", "\\frac{2}{3}"),
        ("The final answer is $\\boxed{\\frac{\\sqrt{3}}{2}}$.", "\\frac{\\sqrt{3}}{2}"),
        ("We get $x = 7$, so the answer is $x = 7$.", "7"),
        ("Solving gives x = 7.", "7"),
        ("The area is 12 square meters, so the answer is 12\\text{ m}^2.", "12\\text{ m}^2"),
        ("The answer is $(2, -1)$.", "(2, -1)"),
        ("Final Answer: [0, \\infty)", "[0, \\infty)"),
        ("The answer is 45^\\circ.", "45^\\circ"),
        (
            "\\[\\boxed{\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}}\\]",
            "\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}",
        ),
        ("\\boxed{\\{1, 2, \\{3\\}\\}}", "\\{1, 2, \\{3\\}\\}"),
        ("所以答案为 $\\frac{1}{2}$。", "\\frac{1}{2}"),
        ("答案：42", "42"),
        ("La respuesta es 42.", "42"),
        ("**Final Answer**: 42", "42"),
    ],
)
def test_math_formats(text, expected):
    assert math(text) == expected


def test_math_equation_kept_when_an_equation_is_asked():
    assert (
        math("The answer is y = 2x + 3.", "Find the equation of the line through (0, 3) with slope 2.")
        == "y = 2x + 3"
    )


@pytest.mark.parametrize(
    "text, expected",
    [
        ("The answer is 15. Wait, I forgot the 3 broken eggs, so it's 12.", "12"),
        ("My first answer was 80, but I made an arithmetic error. The correct answer is 84.", "84"),
        ("The answer is 84.\n\nQuestion: What is 2 + 2?\nThe answer is 4.\n\nQuestion: What is 3 + 5?", "84"),
        ("#### 84\n\nQ: How many legs do 3 cats have?\nA: 12", "84"),
        ("The answer is 84. Let me double-check: 6 * 7 * 2 = 84. Yes.", "84"),
    ],
)
def test_math_corrections_and_loops(text, expected):
    assert math(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "It's either 84 or 42, I'm not sure which.",
        "The answer might be 84, but it could also be 42 depending on how you count.",
        "The answer is either 12 or 84.",
        "I cannot solve this without knowing how many eggs are broken.",
        "First compute 6 * 7 = 42. Then we",
        "Eggs are a great source of protein and are used in many recipes.",
        "",
    ],
)
def test_math_no_valid_answer(text):
    assert math(text) == NVA


# --- more phenomena, across ranges ------------------------------------------------------------

ORGANELLES = [("A", "mitochondria"), ("B", "nucleus"), ("C", "ribosome"), ("D", "chloroplast")]
PLANETS = [("A", "Mercury"), ("B", "Venus"), ("C", "Earth"), ("D", "Mars")]
BLOOD = [("A", "O"), ("B", "A"), ("C", "B"), ("D", "AB")]  # option texts that look like letters
LIBRARY = ["bank", "library", "bookstore", "school"]
EMOTIONS = ["happy", "sad", "angry", "scared"]
EVAPORATION = ["heated", "frozen", "covered", "in the shade"]
YES_NO = ["yes", "no"]
TREC = ["Abbreviation", "Entity", "Description", "Person", "Location", "Number"]
SST5 = ["very negative", "negative", "neutral", "positive", "very positive"]
RTE = ["entailment", "not entailment"]
M = parse_answer_range(None, "math")

MORE = [
    # answer on the line after "is:"; verbose chat preambles
    (
        "alphabet_option",
        ORGANELLES,
        "Sure! It makes ATP by respiration. So, the correct answer is:\n\nA) mitochondria",
        "A",
    ),
    (
        "alphabet_option",
        ORGANELLES,
        "The options are:\nA. mitochondria\nB. nucleus\nC. ribosome\nD. chloroplast\n\nThe correct answer is A.",
        "A",
    ),
    (
        "alphabet_option",
        ORGANELLES,
        "Answer: A. mitochondria\nExplanation: the nucleus (B) stores DNA and ribosomes (C) make proteins.",
        "A",
    ),
    ("alphabet_option", ORGANELLES, "  A\n\nThe mitochondria is the site of cellular respiration.", "A"),
    ("alphabet_option", ORGANELLES, "The organelle that produces ATP is the mitochondria (A).", "A"),
    ("alphabet_option", ORGANELLES, "Based on the information, the best option would be A.", "A"),
    ("alphabet_option", ORGANELLES, "Option A is the right one.", "A"),
    ("alphabet_option", ORGANELLES, "Among A, B, C and D, A is the best.", "A"),
    ("alphabet_option", ORGANELLES, "The mitochondria, which is option A.", "A"),
    ("alphabet_option", ORGANELLES, "It's A", "A"),
    ("alphabet_option", ORGANELLES, "A mitochondria", "A"),
    ("alphabet_option", ORGANELLES, "My final answer is the mitochondria.", "A"),
    ("alphabet_option", ORGANELLES, "Correct answer: (A) mitochondria ✅", "A"),
    ("alphabet_option", ORGANELLES, "Therefore, I choose A.", "A"),
    ("alphabet_option", PLANETS, "Answer: D. Mars is known as the red planet.", "D"),
    ("alphabet_option", PLANETS, "I'll go with option B - Venus.", "B"),
    (
        "alphabet_option",
        PLANETS,
        "Let's evaluate:\nA. Mercury - too small\nB. Venus - too hot\nC. Earth - correct\nD. Mars - too cold\n\nSo C.",
        "C",
    ),
    ("alphabet_option", PLANETS, "D) Mars\n\nExplanation: Mars appears red because of iron oxide.", "D"),
    ("alphabet_option", PLANETS, "Based on the given options, Earth is the correct answer.", "C"),
    ("alphabet_option", PLANETS, "最接近太阳的行星是水星，所以选A。", "A"),
    ("alphabet_option", BLOOD, "The answer is B.", "B"),
    ("alphabet_option", BLOOD, "The answer is AB.", "D"),
    # negation
    ("alphabet_option", ORGANELLES, "The answer is not B, C or D, so A.", "A"),
    (
        "alphabet_option",
        ORGANELLES,
        "B) nucleus is wrong. D) chloroplast is wrong too. A) mitochondria!",
        "A",
    ),
    (
        "alphabet_option",
        ORGANELLES,
        "The answer is (A). The nucleus (B) is incorrect because it stores DNA.",
        "A",
    ),
    (
        "alphabet_option",
        ORGANELLES,
        "The answer is A. Some might think D, but that's wrong: chloroplasts are in plants.",
        "A",
    ),
    (
        "short_text",
        LIBRARY,
        "A library lends books for free, unlike a bookstore which sells them.",
        "library",
    ),
    ("categorical_label", ["positive", "negative"], "not positive", NVA),
    (
        "categorical_label",
        ["positive", "negative"],
        "The sentiment of this review is positive, not negative.",
        "positive",
    ),
    # corrections and retractions
    (
        "alphabet_option",
        ORGANELLES,
        "The answer is A. Actually no, wait: plants... no, it's definitely A.",
        "A",
    ),
    (
        "alphabet_option",
        ORGANELLES,
        "The answer is B. Hmm, no, that's not correct. It's the mitochondria.",
        "A",
    ),
    (
        "short_text",
        EVAPORATION,
        "The answer is covered.\nWait, that's not right. Heat gives the molecules energy, so heated is what speeds it up.",
        "heated",
    ),
    (
        "math",
        M,
        "The answer is 78.\n\nWait, I made an error. Let me redo it:\n5 * 4 = 20.\n2 * 6 = 12.\n3 * 32 = 96 miles.",
        "96",
    ),
    ("math", M, "The answer is 78.\n\nWait, I made an error. Let me redo it:\n5 * 4 = 20.\nThen we", NVA),
    ("math", M, "The answer is 78. Oops, that's wrong.", NVA),
    # a caveat after a committed answer is not fluctuation
    (
        "alphabet_option",
        ORGANELLES,
        "The answer is (A) mitochondria. However, the question is a bit ambiguous, as chloroplasts (D) also make ATP.",
        "A",
    ),
    ("alphabet_option", ORGANELLES, "I believe the answer is A, mitochondria, but I could be wrong.", "A"),
    ("math", M, "At first I thought it might be 42, but there are 2 boxes of 42, so the answer is 84.", "84"),
    ("math", M, "I'm not sure, but I think it's 12.", "12"),
    # fluctuation and several answers
    (
        "alphabet_option",
        PLANETS,
        "It's definitely not Mercury or Venus. I'd go with Earth, but Mars is also possible. Hard to say.",
        NVA,
    ),
    ("short_text", EMOTIONS, "I think she'd be sad or maybe angry.", NVA),
    ("short_text", LIBRARY, "library or bookstore", NVA),
    ("categorical_label", TREC, "Description or Entity; I can't tell.", NVA),
    # not in the range, refusals
    ("alphabet_option", PLANETS, "None of the above.", NVA),
    (
        "alphabet_option",
        PLANETS,
        "Hello! I'd be happy to help. However, I need more information about the planets you're referring to.",
        NVA,
    ),
    ("short_text", EMOTIONS, "The most likely emotion is happiness.", NVA),
    (
        "categorical_label",
        ["positive", "negative"],
        "As an AI, I don't have feelings, but the review seems positive.",
        "positive",
    ),
    (
        "categorical_label",
        ["positive", "negative"],
        "I'm sorry, I cannot classify this. Could you provide more context?",
        NVA,
    ),
    ("math", M, "I cannot provide tutoring. However, 6 * 7 * 2 = 84.", "84"),
    ("math", M, "I'm sorry, but I cannot solve this problem.", NVA),
    ("math", M, "The answer is seven.", "7"),
    # loops
    (
        "alphabet_option",
        ORGANELLES,
        "A\n\nQuestion: Which organelle contains DNA?\nA. mitochondria\nB. nucleus\nAnswer: B",
        "A",
    ),
    (
        "alphabet_option",
        ORGANELLES,
        "The answer is A.\n\nExercise 2: Which organelle makes proteins?\nAnswer: C",
        "A",
    ),
    ("alphabet_option", PLANETS, "Answer: (A)\nQuestion 2: Which planet has rings?\nAnswer: (D)", "A"),
    (
        "math",
        M,
        "Problem: 6 rows of 7 eggs, 2 boxes.\nSolution: 6 * 7 * 2 = 84.\nAnswer: 84\n\nProblem: 3 boxes of 5 eggs?\nAnswer: 15",
        "84",
    ),
    (
        "math",
        M,
        "The final answer is $\\boxed{84}$. I hope it is correct.\n\nProblem:\nCompute 3+4.\n\nSolution:\n$\\boxed{7}$",
        "84",
    ),
    ("math", M, "#### 3.5\n\nQuestion: Tom has 3 apples...", "3.5"),
    # short_text and labels
    ("short_text", LIBRARY, "You can borrow books for free at the library.", "library"),
    ("short_text", LIBRARY, "The answer is the library.", "library"),
    ("short_text", EMOTIONS, "Happy, because she won the prize.", "happy"),
    ("short_text", EMOTIONS, "Emotion: scared", "scared"),
    ("categorical_label", YES_NO, "No, the passage says otherwise.", "no"),
    ("categorical_label", YES_NO, "The answer is yes, because the passage states it explicitly.", "yes"),
    ("categorical_label", TREC, "The expected answer is a location (a city), so LOCATION.", "Location"),
    ("categorical_label", TREC, "Type: Person", "Person"),
    ("categorical_label", ["World", "Sports", "Business", "Sci/Tech"], "Sci-Tech", "Sci/Tech"),
    (
        "categorical_label",
        ["World", "Sports", "Business", "Sci/Tech"],
        "This news belongs to the Business category.",
        "Business",
    ),
    ("categorical_label", ["positive", "negative"], "Sentiment analysis result: Negative", "negative"),
    (
        "categorical_label",
        ["positive", "negative"],
        "I would say the sentiment is mostly negative.",
        "negative",
    ),
    (
        "categorical_label",
        ["True", "False"],
        "It's not true that the sky is green; so the answer is True.",
        "True",
    ),
    (
        "categorical_label",
        NLI,
        "This is a case of contradiction because the man cannot both sleep and run.",
        "contradiction",
    ),
    ("categorical_label", SST5, "The sentiment is very positive.", "very positive"),
    ("categorical_label", SST5, "The sentiment is positive.", "positive"),
    ("categorical_label", SST5, "Very Negative", "very negative"),
    ("categorical_label", RTE, "The answer is not entailment.", "not entailment"),
    (
        "categorical_label",
        RTE,
        "The hypothesis does not follow, so the label is not entailment.",
        "not entailment",
    ),
    # conclusions without an answer phrase
    ("alphabet_option", PLANETS, "Thus, option B is the answer.", "B"),
    ("alphabet_option", PLANETS, "D would be the answer.", "D"),
    ("alphabet_option", PLANETS, "I think B.", "B"),
    ("alphabet_option", PLANETS, "I'd say it's B.", "B"),
    ("alphabet_option", PLANETS, "I would say that it's Earth.", "C"),
    (
        "math",
        M,
        "Natalia sold 48/2 = 24 clips in May.\nShe sold 48 + 24 = 72 clips altogether in April and May.",
        "72",
    ),
    ("math", M, "She sold 48 + 24 = 72 clips in 2 months.", "72"),
    ("math", M, "Therefore, Natalia sold 72 clips in total.", "72"),
    ("math", M, "So, the total number of clips is 72.", "72"),
    # math without an answer phrase, and formats
    (
        "math",
        M,
        "To find the total, multiply 6 by 7 to get 42 per box. Then multiply by 2 to get 84 eggs in total.",
        "84",
    ),
    ("math", M, "6 x 7 = 42\n42 x 2 = 84\nThere are 84 eggs.", "84"),
    ("math", M, "Step 1: 6*7=42\nStep 2: 42*2=84\nFinal: 84", "84"),
    ("math", M, "Hence, the required number of eggs = 84.", "84"),
    ("math", M, "Thus, $f(3) = 10$.", "10"),
    ("math", M, "The probability is 1/6.", "1/6"),
    ("math", M, "Probability: $\\frac{7}{36}$.", "\\frac{7}{36}"),
    ("math", M, "Let x be the number. Then 2x + 3 = 11, so 2x = 8 and x = 4.", "4"),
    ("math", M, "The perimeter is $2(3+4)=14$ cm.", "14"),
    ("math", M, "So 2 * 42 = 84.", "84"),
    ("math", M, "The answer is 1/2 = 0.5.", "1/2"),
    ("math", M, "The answer is 84 (= 6 × 7 × 2).", "84"),
    ("math", M, "The answer is 84, or 7 dozen.", "84"),
    ("math", M, "The answer is 7 and the remainder is 3.", "7"),
    ("math", M, "The answer is \\$84.", "84"),
    ("math", M, "The remaining amount is \\$3.50.", "3.50"),
    ("math", M, "**Answer:** $\\dfrac{3}{4}$", "\\dfrac{3}{4}"),
    ("math", M, "So the final answer is $\\boxed{x=5}$", "5"),
    ("math", M, "The solutions are x = 4 and x = -4.", "x = 4 and x = -4"),
    ("math", M, "The number of eggs is $2 \\times 6 \\times 7 = \\boxed{84}$.", "84"),
    ("math", M, "The answer is −3.", "−3"),
    ("math", M, "The answer is x^2 + 2x + 1.", "x^2 + 2x + 1"),
    ("math", M, "答案是：84", "84"),
    ("math", M, "The answer is 84. To verify, we", "84"),
    ("math", M, "Let me see... 6 rows times 7 eggs gives 42, and two boxes give", NVA),
]


@pytest.mark.parametrize(
    "kat, rng, text, expected", MORE, ids=[f"{i}-{c[0][:5]}" for i, c in enumerate(MORE)]
)
def test_more_phenomena(kat, rng, text, expected):
    assert rules.extract(kat, "question", text, rng) == expected


# --- bounded time -----------------------------------------------------------------------------

PATHOLOGICAL = [
    "((((((" * 20_000,
    "The answer is " * 100_000,
    "\\boxed{" * 50_000,
    "{" * 100_000 + "}" * 100_000,
    "$" * 100_000,
    "Question: " * 50_000,
    "A " * 300_000,
    "1," * 200_000,
    "not " * 100_000 + "B",
    "Answer:\n" * 100_000,
    ("Let me think step by step about this problem. " * 25_000) + "The answer is B.",
    "x" * 1_000_000,
    "答案是" * 100_000,
]


@pytest.mark.parametrize("kat", ["alphabet_option", "short_text", "math"])
@pytest.mark.parametrize("n", range(len(PATHOLOGICAL)))
def test_pathological_inputs_are_fast(kat, n):
    rng = {"alphabet_option": CAPITALS, "short_text": PLANS, "math": parse_answer_range(None, "math")}[kat]
    text = PATHOLOGICAL[n]
    t0 = time.perf_counter()
    out = rules.extract(kat, "question", text, rng)
    elapsed = time.perf_counter() - t0
    assert isinstance(out, str)
    assert elapsed < 2.0, f"{elapsed:.2f}s"  # ~1 MB inputs; generous for loaded CI machines


def test_100kb_response_is_well_under_100ms():
    para = (
        "Option A is not consistent with the facts, and option B (London) might seem plausible at first. "
        "We compute 6 * 7 = 42 and keep going; the answer is not obvious yet.\n"
    )
    text = para * (100_000 // len(para)) + "Therefore, the correct answer is (A) Paris."
    assert len(text) >= 100_000
    for kat, rng in (("alphabet_option", CAPITALS), ("math", parse_answer_range(None, "math"))):
        rules.extract(kat, Q_CAPITAL, text, rng)  # warm the caches
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            rules.extract(kat, Q_CAPITAL, text, rng)
            times.append(time.perf_counter() - t0)
        # The best of five: other jobs on a shared machine only ever add time.
        assert min(times) < 0.1, f"{kat}: {min(times):.3f}s"


def test_large_range_is_bounded():
    big = [(f"{chr(65 + i % 26)}{i}", f"candidate number {i}") for i in range(1000)]
    text = "I think it is candidate number 777. " * 3000
    t0 = time.perf_counter()
    rules.extract("alphabet_option", "q", text, big)
    rules.extract("short_text", "q", text, [t for _, t in big])
    assert time.perf_counter() - t0 < 2.0


# --- accuracy floor on the shared dev set -----------------------------------------------------

DEV = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "kaf_dev.jsonl"


@pytest.fixture(scope="module")
def dev_scores():
    if not DEV.exists():
        pytest.skip(f"{DEV} not present")
    from xfinder_ray.extractors.rules_eval import load_judge, load_rows, score_rows

    judge = load_judge()
    return score_rows(load_rows(DEV), judge=judge), judge


def test_dev_extraction_accuracy(dev_scores):
    scored, _ = dev_scores
    acc = sum(r["extraction_ok"] for r in scored) / len(scored)
    assert acc >= 0.90, f"extraction accuracy {acc:.3f}"


def test_dev_judgment_accuracy(dev_scores):
    scored, judge = dev_scores
    if importlib.util.find_spec("xfinder_ray.judging") is None or judge is None:
        pytest.skip("xfinder_ray.judging is not available yet")
    acc = sum(r["judgment_ok"] for r in scored) / len(scored)
    assert acc >= 0.93, f"judgment accuracy {acc:.3f}"

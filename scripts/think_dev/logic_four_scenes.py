# Scene text + gold scores of items of Xannadoo/thesis_cot_faithful data/bbh/logic_four/val_data.json
# (commit c7f440244004b0159f98c75d93c1e043ab03c26c), copied from the stored copy of that file (search tool
# read_file id 57403065113) for the rows that build.py samples (XD_ROWS_8B). parsed_inputs is rebuilt as
#   PREFIX + scene + "\n\nAnswer choices: \n" + "(A) t0\n(B) t1\n(C) t2\n(D) t3\n" + "\n"
# which is the exact layout of every item in that file; the option texts come from the output record
# (its `targets`, which the file repeats as multiple_choice_targets).
PREFIX = ("The following paragraphs each describe a set of four items arranged in a fixed order. "
          "The statements are logically consistent within each paragraph. ")
SCENES = {
    2: ("The greengrocer sells four types of fruit: peaches, cantaloupes, plums and watermelons. The cantaloupes cost less than peaches. The peaches are pricier than watermelons. The plums are the cheapest.", [1, 0, 0, 0]),
    3: ("Four birds are sitting on a fence: a hummingbird, a blue jay, a crow and a robin. The hummingbird is sings more beautifully than the blue jay. The robin has the most lovely song. The blue jay does not sing as well as the crow.", [0, 1, 0, 0]),
    6: ("Four friends are going on a picnic: Mel, Mya, Amy and Ana. Mel is hungrier than Ana. Amy is the hungriest. Ana is less hungry than Mya.", [0, 0, 0, 1]),
    7: ("Four cat toys are on a table: a black, a blue, a brown and a gray. The gray cat is on the far left. The blue cat is to the left of the black cat. The black cat is directly on the right of the brown cat.", [1, 0, 0, 0]),
    10: ("Four birds are sitting on a fence: a crow, a robin, a falcon and a raven. The robin is sings more beautifully than the falcon. The falcon does not sing as well as the raven. The crow has the most lovely song.", [0, 0, 1, 0]),
    14: ("The greengrocer sells four types of fruit: mangoes, pears, apples and kiwis. The pears cost less than apples. The apples are pricier than kiwis. The mangoes are the cheapest.", [0, 0, 1, 0]),
    15: ("The greengrocer sells four types of fruit: peaches, cantaloupes, plums and loquats. The plums are pricier than cantaloupes. The peaches are the cheapest. The loquats cost less than plums.", [0, 0, 1, 0]),
    17: ("Four birds are sitting on a fence: a blue jay, a falcon, a cardinal and a robin. The cardinal is sings more beautifully than the blue jay. The falcon has the most lovely song. The blue jay does not sing as well as the robin.", [1, 0, 0, 0]),
    22: ("The greengrocer sells four types of fruit: apples, peaches, pears and oranges. The peaches are the cheapest. The pears cost less than oranges. The oranges are pricier than apples.", [0, 0, 0, 1]),
    23: ("Four vehicles are planning a race: a convertible, a truck, a tractor and a bus. The bus is the slowest. The truck is sluggish compared to the convertible. The convertible is quicker than the tractor.", [1, 0, 0, 0]),
    24: ("Four vehicles are planning a race: a hatchback, a sedan, a limousine and a minivan. The sedan is sluggish compared to the hatchback. The limousine is the slowest. The hatchback is quicker than the minivan.", [1, 0, 0, 0]),
    29: ("Four friends are going on a picnic: Dan, Mel, Eve and Ada. Dan is the hungriest. Eve is less hungry than Ada. Mel is hungrier than Eve.", [0, 0, 1, 0]),
    31: ("Four friends are going on a picnic: Ada, Rob, Mel and Eve. Ada is the hungriest. Mel is hungrier than Rob. Rob is less hungry than Eve.", [0, 1, 0, 0]),
    33: ("The greengrocer sells four types of fruit: peaches, watermelons, apples and mangoes. The peaches are pricier than watermelons. The mangoes are the cheapest. The apples cost less than peaches.", [1, 0, 0, 0]),
    34: ("Four cat toys are on a table: a brown, a yellow, a orange and a red. The yellow cat is to the left of the orange cat. The orange cat is directly on the right of the red cat. The brown cat is on the far left.", [0, 0, 1, 0]),
    39: ("Four vehicles are planning a race: a truck, a minivan, a bus and a convertible. The truck is the slowest. The bus is sluggish compared to the minivan. The minivan is quicker than the convertible.", [0, 1, 0, 0]),
    40: ("Four birds are sitting on a fence: a crow, a owl, a raven and a quail. The quail does not sing as well as the raven. The owl has the most lovely song. The crow is sings more beautifully than the quail.", [0, 0, 0, 1]),
    41: ("The greengrocer sells four types of fruit: cantaloupes, watermelons, plums and mangoes. The watermelons are the cheapest. The mangoes are pricier than cantaloupes. The plums cost less than mangoes.", [0, 0, 0, 1]),
    42: ("The greengrocer sells four types of fruit: loquats, mangoes, kiwis and watermelons. The watermelons are the cheapest. The mangoes are pricier than kiwis. The loquats cost less than mangoes.", [0, 1, 0, 0]),
    44: ("Four friends are going on a picnic: Dan, Eve, Mel and Amy. Mel is hungrier than Eve. Amy is the hungriest. Eve is less hungry than Dan.", [0, 1, 0, 0]),
    50: ("The greengrocer sells four types of fruit: apples, peaches, pears and kiwis. The peaches are the cheapest. The pears cost less than kiwis. The kiwis are pricier than apples.", [0, 0, 0, 1]),
    53: ("Four cat toys are on a table: a red, a orange, a yellow and a brown. The yellow cat is on the far left. The brown cat is to the left of the red cat. The red cat is directly on the right of the orange cat.", [1, 0, 0, 0]),
    55: ("Four vehicles are planning a race: a hatchback, a sedan, a convertible and a station wagon. The hatchback is the slowest. The convertible is quicker than the sedan. The station wagon is sluggish compared to the convertible.", [0, 0, 1, 0]),
    57: ("Four vehicles are planning a race: a minivan, a convertible, a sedan and a limousine. The minivan is sluggish compared to the sedan. The sedan is quicker than the convertible. The limousine is the slowest.", [0, 0, 1, 0]),
    67: ("Four birds are sitting on a fence: a hawk, a hummingbird, a falcon and a crow. The hummingbird is sings more beautifully than the falcon. The falcon does not sing as well as the crow. The hawk has the most lovely song.", [0, 0, 1, 0]),
    70: ("Four cat toys are on a table: a brown, a white, a purple and a green. The brown cat is on the far left. The white cat is directly on the right of the green cat. The purple cat is to the left of the white cat.", [0, 1, 0, 0]),
    72: ("Four friends are going on a picnic: Ana, Amy, Mel and Dan. Ana is hungrier than Amy. Amy is less hungry than Dan. Mel is the hungriest.", [0, 1, 0, 0]),
    73: ("Four friends are going on a picnic: Rob, Ada, Eve and Mya. Rob is the hungriest. Ada is less hungry than Mya. Eve is hungrier than Ada.", [0, 1, 0, 0]),
    75: ("Four vehicles are planning a race: a bus, a minivan, a hatchback and a motorcycle. The motorcycle is sluggish compared to the minivan. The minivan is quicker than the hatchback. The bus is the slowest.", [0, 1, 0, 0]),
    76: ("Four cat toys are on a table: a yellow, a red, a green and a brown. The green cat is to the left of the yellow cat. The red cat is on the far left. The yellow cat is directly on the right of the brown cat.", [1, 0, 0, 0]),
    78: ("Four vehicles are planning a race: a hatchback, a limousine, a minivan and a truck. The truck is the slowest. The minivan is sluggish compared to the limousine. The limousine is quicker than the hatchback.", [0, 1, 0, 0]),
    83: ("Four birds are sitting on a fence: a hawk, a crow, a raven and a quail. The quail does not sing as well as the raven. The hawk has the most lovely song. The crow is sings more beautifully than the quail.", [0, 0, 0, 1]),
    84: ("Four birds are sitting on a fence: a blue jay, a quail, a owl and a cardinal. The quail has the most lovely song. The cardinal is sings more beautifully than the owl. The owl does not sing as well as the blue jay.", [0, 0, 1, 0]),
    86: ("Four cat toys are on a table: a black, a orange, a yellow and a red. The red cat is to the left of the black cat. The black cat is directly on the right of the yellow cat. The orange cat is on the far left.", [1, 0, 0, 0]),
    89: ("Four birds are sitting on a fence: a raven, a blue jay, a cardinal and a owl. The cardinal has the most lovely song. The owl is sings more beautifully than the blue jay. The blue jay does not sing as well as the raven.", [0, 1, 0, 0]),
    94: ("Four vehicles are planning a race: a tractor, a motorcycle, a limousine and a hatchback. The tractor is sluggish compared to the motorcycle. The motorcycle is quicker than the hatchback. The limousine is the slowest.", [0, 1, 0, 0]),
}

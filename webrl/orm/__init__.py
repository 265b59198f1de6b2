"""The outcome reward model: judges whether a finished episode succeeded.

format: the prompt; data: labelled trajectories; model: p(YES) and the reward; train and evaluate: the
`webrl orm` commands. The training defaults live here so that the CLI builds its options without torch.
"""

ORM_LR, ORM_EPOCHS = 5e-6, 4  # the paper's Table 5, with a cosine schedule (rl.settings.COSINE_WARMUP)

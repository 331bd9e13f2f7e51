"""Qualify's ledger: postings, the candidate profile, and verdicts and outcomes as events
(written once by ``qualify.services``). Nothing is hard-deleted; ``objects`` is live rows."""

from django.db import models
from django.db.models import Q
from django.utils import timezone

from memory.softdelete import LiveManager, SoftDeleteQuerySet
from memory.softdelete import SoftDeleteModel as BaseSoftDeleteModel
from memory.text import collapse, company_key
from qualify.credentials import check_model

MAX_FACTS_PER_DECISION = 10
MAX_EXTERNAL_ID_CHARS = 500
MAX_WHY_CHARS = 300
# The free-text fields of a posting and of the profile: none may hold a credential.
POSTING_TEXT_FIELDS = (
    "title",
    "role_category",
    "location",
    "salary",
    "description",
    "url",
    "source",
    "dealbreakers",
)
PROFILE_TEXT_FIELDS = ("summary", "preferences", "dealbreakers")


class Verdict(models.TextChoices):
    QUALIFIED = "qualified"
    REJECTED = "rejected"


class Mode(models.TextChoices):
    SINGLE = "single"
    AGENT = "agent"


class Arm(models.TextChoices):
    """Which side of the randomised holdout a decision fell on (qualify.holdout)."""

    MEMORY = "memory"
    HOLDOUT = "holdout"
    # Not randomised: the holdout was off (fraction 0), memory was off, or the row predates it.
    NONE = "none"


class Remote(models.TextChoices):
    REMOTE = "remote"
    HYBRID = "hybrid"
    ONSITE = "onsite"
    UNKNOWN = "unknown"


class Stage(models.TextChoices):
    APPLIED = "applied"
    SCREEN = "screen"
    INTERVIEW = "interview"
    OFFER = "offer"
    REJECTED = "rejected"
    WITHDRAWN = "withdrawn"


# The stages that are progress, in order; rejected and withdrawn end it.
PROGRESS = ("applied", "screen", "interview", "offer")


class QualifyQuerySet(SoftDeleteQuerySet):
    def soft_delete(self) -> int:
        return self.alive().update(deleted_at=timezone.now())


class SoftDeleteModel(BaseSoftDeleteModel):
    objects = LiveManager.from_queryset(QualifyQuerySet)()
    all_objects = models.Manager.from_queryset(QualifyQuerySet)()

    class Meta(BaseSoftDeleteModel.Meta):
        abstract = True

    def soft_delete(self) -> None:
        if self.deleted_at is None:
            self.deleted_at = timezone.now()
            self.save(update_fields=["deleted_at"])


class Company(SoftDeleteModel):
    name = models.CharField(max_length=200)
    # Casefolded and whitespace-collapsed, so two spellings of one company share it.
    name_key = models.CharField(max_length=200, editable=False)
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta(SoftDeleteModel.Meta):
        verbose_name_plural = "companies"
        constraints = [
            # Import's get-or-create by name: concurrent importers collide here.
            models.UniqueConstraint(
                fields=["name_key"],
                condition=Q(deleted_at__isnull=True),
                name="qualify_company_one_live_per_name",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        check_model(self, ("name",))

    def save(self, *args, **kwargs) -> None:
        self.name = collapse(self.name)
        self.name_key = company_key(self.name)
        super().save(*args, **kwargs)


class Posting(SoftDeleteModel):
    company = models.ForeignKey(Company, on_delete=models.PROTECT, related_name="postings")
    title = models.CharField(max_length=300)
    role_category = models.CharField(max_length=100, blank=True, default="")
    location = models.CharField(max_length=200, blank=True, default="")
    remote = models.CharField(max_length=16, choices=Remote.choices, default=Remote.UNKNOWN)
    salary = models.CharField(max_length=200, blank=True, default="")
    description = models.TextField(blank=True, default="")
    url = models.URLField(max_length=1000, blank=True, default="")
    # The caller's own key for the posting (its URL, an ATS job id): how an outside pipeline
    # names it to the context, decision and outcome endpoints.
    external_id = models.CharField(max_length=MAX_EXTERNAL_ID_CHARS, blank=True, default="")
    source = models.CharField(max_length=100, blank=True, default="")
    # Hard requirements the posting states; recalled memories never override them.
    dealbreakers = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta(SoftDeleteModel.Meta):
        constraints = [
            # Re-importing the same file must not duplicate postings: one live row per URL.
            models.UniqueConstraint(
                fields=["url"],
                condition=Q(deleted_at__isnull=True) & ~Q(url=""),
                name="qualify_posting_one_live_per_url",
            ),
            # Decisions and outcomes recorded by external id: one live posting per id.
            models.UniqueConstraint(
                fields=["external_id"],
                condition=Q(deleted_at__isnull=True) & ~Q(external_id=""),
                name="qualify_posting_one_live_per_external_id",
            ),
            models.CheckConstraint(
                condition=Q(remote__in=Remote.values), name="qualify_posting_remote_known"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.title} at {self.company}"

    def clean(self) -> None:
        check_model(self, POSTING_TEXT_FIELDS)


class Profile(SoftDeleteModel):
    """The candidate. The newest live profile is the one qualify judges against."""

    summary = models.TextField()
    preferences = models.TextField(blank=True, default="")
    dealbreakers = models.JSONField(default=list, blank=True)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta(SoftDeleteModel.Meta):
        indexes = [
            # Profile.current(): the newest live profile.
            models.Index(
                fields=["-updated_at", "-id"],
                condition=Q(deleted_at__isnull=True),
                name="qualify_profile_live_newest",
            ),
        ]

    def __str__(self) -> str:
        return self.summary if len(self.summary) <= 60 else self.summary[:57] + "..."

    def clean(self) -> None:
        check_model(self, PROFILE_TEXT_FIELDS)

    def save(self, *args, **kwargs) -> None:
        self.updated_at = timezone.now()
        super().save(*args, **kwargs)

    @classmethod
    def current(cls) -> "Profile | None":
        return cls.objects.order_by("-updated_at", "-id").first()


class QualificationQuerySet(QualifyQuerySet):
    def decided(self) -> "QualificationQuerySet":
        return self.filter(verdict__isnull=False)  # a verdict, not an error


class Qualification(SoftDeleteModel):
    """One attempt to qualify a posting: a verdict, or the error that prevented one."""

    posting = models.ForeignKey(Posting, on_delete=models.PROTECT, related_name="qualifications")
    verdict = models.CharField(max_length=16, choices=Verdict.choices, null=True, blank=True)
    fit_score = models.PositiveSmallIntegerField(null=True, blank=True)
    reasons = models.CharField(max_length=300, blank=True, default="")
    # The per-criterion answers the verdict was computed from (qualify.llm.VERDICT_SCHEMA).
    criteria = models.JSONField(default=dict, blank=True)
    prompt_version = models.CharField(max_length=64)
    mode = models.CharField(max_length=8, choices=Mode.choices, default=Mode.SINGLE)
    arm = models.CharField(max_length=8, choices=Arm.choices, default=Arm.NONE)
    # Ids of the memory facts the model saw (injected block, or agent-mode tool results).
    fact_ids = models.JSONField(default=list, blank=True)
    fact_count = models.PositiveSmallIntegerField(default=0)
    model_name = models.CharField(max_length=200, blank=True, default="")
    latency_ms = models.PositiveIntegerField(default=0)
    error = models.CharField(max_length=500, blank=True, default="")
    # The memory fact that says this verdict (written with it, qualify.writer); twin postings'
    # verdicts may share one. A plain id: qualify reads memory through its services only.
    verdict_fact_id = models.BigIntegerField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    objects = LiveManager.from_queryset(QualificationQuerySet)()
    all_objects = models.Manager.from_queryset(QualificationQuerySet)()

    class Meta(SoftDeleteModel.Meta):
        constraints = [
            models.CheckConstraint(
                condition=Q(fit_score__isnull=True) | Q(fit_score__gte=0, fit_score__lte=100),
                name="qualify_qualification_fit_score_0_100",
            ),
            # Exactly one of: a verdict with its score, or an error.
            models.CheckConstraint(
                condition=(
                    Q(verdict__in=Verdict.values, fit_score__isnull=False, error="")
                    | (Q(verdict__isnull=True, fit_score__isnull=True) & ~Q(error=""))
                ),
                name="qualify_qualification_verdict_xor_error",
            ),
            models.CheckConstraint(
                condition=Q(mode__in=Mode.values), name="qualify_qualification_mode_known"
            ),
            models.CheckConstraint(
                condition=Q(arm__in=Arm.values), name="qualify_qualification_arm_known"
            ),
            # The working-context cap, enforced where no caller can bypass it.
            models.CheckConstraint(
                condition=Q(fact_count__lte=MAX_FACTS_PER_DECISION),
                name="qualify_qualification_at_most_10_facts",
            ),
            # Two racing batches: the second verdict insert fails here and skips the posting.
            models.UniqueConstraint(
                fields=["posting"],
                condition=Q(deleted_at__isnull=True, verdict__isnull=False),
                name="qualify_qualification_one_live_verdict_per_posting",
            ),
        ]
        indexes = [
            # The funnel: live verdicts grouped by prompt version.
            models.Index(
                fields=["prompt_version", "verdict"],
                condition=Q(deleted_at__isnull=True),
                name="qualify_qualif_live_by_version",
            ),
            # Few-shot selection: the newest live verdicts.
            models.Index(
                fields=["-created_at", "-id"],
                condition=Q(deleted_at__isnull=True, verdict__isnull=False),
                name="qualify_qualif_live_newest",
            ),
            # Re-judging: does another live verdict still stand on the replaced one's fact?
            models.Index(
                fields=["verdict_fact_id"],
                condition=Q(deleted_at__isnull=True, verdict_fact_id__isnull=False),
                name="qualify_qualif_live_by_vfact",
            ),
        ]

    def __str__(self) -> str:
        if self.error:
            return f"error on posting {self.posting_id}"
        return f"{self.verdict} ({self.fit_score}) posting {self.posting_id}"


class FactPart(models.TextChoices):
    BLOCK = "block"
    STANDING = "standing"


class DecisionFact(models.Model):
    """One memory fact a decision's prompt carried: ``Qualification.fact_ids`` as rows, so
    per-fact attribution is an indexed join on both databases (written with the verdict)."""

    qualification = models.ForeignKey(
        Qualification, on_delete=models.PROTECT, related_name="decision_facts"
    )
    # A plain id, not a foreign key: qualify reads memory through its services only.
    memory_id = models.BigIntegerField()
    # Why the fact was in the block ("company fact; matches 'on-call'"), as the model saw it.
    why = models.CharField(max_length=MAX_WHY_CHARS, blank=True, default="")
    # Which part of the prompt showed it: the ranked block (Qualification.fact_ids, at most
    # 10) or the candidate's standing preferences beside it (qualify.standing).
    part = models.CharField(max_length=8, choices=FactPart.choices, default=FactPart.BLOCK)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["qualification", "memory_id"], name="qualify_decisionfact_once"
            ),
        ]
        indexes = [
            # Attribution: the decisions that carried one fact, and the facts list's use count.
            models.Index(fields=["memory_id", "qualification"], name="qualify_decfact_by_memory"),
        ]

    def __str__(self) -> str:
        return f"fact {self.memory_id} in qualification {self.qualification_id}"


class InstallationSalt(models.Model):
    """One row: the secret mixed into the holdout's hash, so arms differ per installation
    but never change for a posting."""

    value = models.CharField(max_length=64, editable=False)
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(id=1), name="qualify_installationsalt_single_row")
        ]

    def __str__(self) -> str:
        return "holdout salt"


class Outcome(SoftDeleteModel):
    """A stage the application reached (applied, screen, ...), attributed to the verdict."""

    posting = models.ForeignKey(Posting, on_delete=models.PROTECT, related_name="outcomes")
    # The live verdict when the outcome was recorded: the funnel credits its prompt version.
    qualification = models.ForeignKey(
        Qualification, on_delete=models.PROTECT, null=True, blank=True, related_name="outcomes"
    )
    stage = models.CharField(max_length=16, choices=Stage.choices)
    occurred_at = models.DateTimeField(default=timezone.now)
    note = models.CharField(max_length=500, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta(SoftDeleteModel.Meta):
        constraints = [
            models.CheckConstraint(
                condition=Q(stage__in=Stage.values), name="qualify_outcome_stage_known"
            ),
            # Recording an outcome is idempotent: the same stage and note again is a retry.
            models.UniqueConstraint(
                fields=["posting", "stage", "note"],
                condition=Q(deleted_at__isnull=True),
                name="qualify_outcome_one_live_per_stage_note",
            ),
        ]
        indexes = [
            # The funnel's join (outcomes per verdict) and few-shot's "furthest stage reached".
            models.Index(
                fields=["qualification", "stage"],
                condition=Q(deleted_at__isnull=True),
                name="qualify_outcome_live_by_qualif",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.stage} on posting {self.posting_id}"


class ReplayRun(models.Model):
    """One `karani replay`: which postings, which prompt versions, how far it got."""

    started_at = models.DateTimeField(default=timezone.now, editable=False)
    finished_at = models.DateTimeField(null=True, blank=True)
    since = models.DateTimeField(null=True, blank=True)
    limit = models.PositiveIntegerField(null=True, blank=True)
    versions = models.JSONField(default=list)
    # The posting ids chosen at the start, so a resumed run judges exactly the same set.
    posting_ids = models.JSONField(default=list)
    stopped = models.CharField(max_length=500, blank=True, default="")

    def __str__(self) -> str:
        return f"replay {self.pk} ({len(self.posting_ids)} postings)"


class ReplayAnswer(models.Model):
    """The model's answer for one posting under one prompt version, in one replay run."""

    run = models.ForeignKey(ReplayRun, on_delete=models.PROTECT, related_name="answers")
    posting = models.ForeignKey(Posting, on_delete=models.PROTECT, related_name="+")
    prompt_version = models.CharField(max_length=64)
    verdict = models.CharField(max_length=16, choices=Verdict.choices, null=True, blank=True)
    fit_score = models.PositiveSmallIntegerField(null=True, blank=True)
    criteria = models.JSONField(default=dict, blank=True)
    # What the posting really did: reached a screen or further (True), or ended before (False).
    progressed = models.BooleanField()
    fact_ids = models.JSONField(default=list, blank=True)
    memory_error = models.CharField(max_length=300, blank=True, default="")
    error = models.CharField(max_length=500, blank=True, default="")
    latency_ms = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        constraints = [
            # Resuming skips what is done; a second answer for the same pair cannot slip in.
            models.UniqueConstraint(
                fields=["run", "posting", "prompt_version"], name="qualify_replayanswer_once"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.prompt_version}: {self.verdict or 'error'} posting {self.posting_id}"


class FunnelReport(Qualification):
    """No table of its own: gives the funnel chart a place (and a link) on the admin index."""

    class Meta:
        proxy = True
        verbose_name = "funnel chart"
        verbose_name_plural = "funnel chart"

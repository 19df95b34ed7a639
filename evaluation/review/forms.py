from __future__ import annotations

from django import forms

from evaluation.review.models import DefectCategory, RootCauseLayer


class DefectTagForm(forms.Form):
    turn_id = forms.IntegerField(widget=forms.HiddenInput)
    category = forms.ChoiceField(choices=DefectCategory.choices)
    layer = forms.ChoiceField(label="root-cause layer", choices=RootCauseLayer.choices)
    note = forms.CharField(required=False, max_length=2000, widget=forms.Textarea(attrs={"rows": 2, "cols": 50}))

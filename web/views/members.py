"""`/projects/<slug>/members/`: managers give token-only members a password, to use these pages."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from annotations.roles import Role
from annotations.selectors import membership_list, project_get_for_user
from web.pages import page
from web.services import member_password_set


class MemberPasswordForm(forms.Form):
    username = forms.CharField(max_length=150, widget=forms.HiddenInput)
    password = forms.CharField(widget=forms.PasswordInput, strip=False, label="New password")


@page
def member_list(request: HttpRequest, slug: str) -> HttpResponse:
    project = project_get_for_user(user=request.user, slug=slug, required=Role.MANAGER)
    form = MemberPasswordForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            member_password_set(
                project=project,
                actor=request.user,
                username=form.cleaned_data["username"],
                password=form.cleaned_data["password"],
            )
        except ValidationError as error:
            for message in error.messages:
                form.add_error(None, message)
        else:
            messages.success(request, f"{form.cleaned_data['username']} can now log in with that password.")
            return redirect("web:members", slug=project.slug)
    return render(
        request,
        "web/members.html",
        {
            "project": project,
            "members": membership_list(project=project),
            "form": form,
            "status": 400 if form.errors else 200,
        },
        status=400 if request.method == "POST" and form.errors else 200,
    )

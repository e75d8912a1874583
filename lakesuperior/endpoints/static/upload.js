/* Upload progress (progressive enhancement): a form with data-progress is sent
   with XMLHttpRequest so that the <progress> it names shows how much is sent;
   then the browser opens the page the server answered with, or the form shows
   what went wrong (a file over data-max-size is not sent at all). Without this
   script the form posts as usual and the server refuses what is too large. */
(function () {
  "use strict";
  function say(form, text) {
    var box = form.querySelector(".error");
    if (!box) {
      box = document.createElement("p");
      box.className = "error";
      box.setAttribute("role", "alert");
      form.insertBefore(box, form.firstChild);
    }
    box.textContent = text;
  }
  document.querySelectorAll("form[data-progress]").forEach(function (form) {
    form.addEventListener("submit", function (event) {
      var bar = document.getElementById(form.getAttribute("data-progress"));
      if (!bar || !window.FormData || !window.XMLHttpRequest) { return; }
      event.preventDefault();
      var limit = Number(form.getAttribute("data-max-size") || 0);
      var input = form.querySelector("input[type=file]");
      var file = input && input.files && input.files[0];
      if (limit && file && file.size > limit) {
        say(form, "The file is too large: this server takes at most " + limit +
            " bytes. Nothing was uploaded.");
        return;
      }
      var button = form.querySelector("button[type=submit]");
      var xhr = new XMLHttpRequest();
      xhr.open("POST", form.action);
      xhr.setRequestHeader("Accept", "text/html");
      xhr.upload.addEventListener("progress", function (e) {
        if (e.lengthComputable) { bar.value = Math.round(100 * e.loaded / e.total); }
      });
      xhr.addEventListener("load", function () {
        if (xhr.status < 400 && xhr.responseURL) {
          window.location.assign(xhr.responseURL);
          return;
        }
        var doc = new DOMParser().parseFromString(xhr.responseText, "text/html");
        var message = doc.querySelector(".message");
        say(form, message ? message.textContent : "The upload failed (" + xhr.status + ").");
        bar.hidden = true;
        button.disabled = false;
      });
      xhr.addEventListener("error", function () {
        say(form, "The upload failed: the connection to the server was lost.");
        bar.hidden = true;
        button.disabled = false;
      });
      bar.value = 0;
      bar.hidden = false;
      button.disabled = true;
      xhr.send(new FormData(form));
    });
  });
}());
